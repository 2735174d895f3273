// A write to a key whose SyncWrite is still in flight: the server answers
// SyncWriteInProgress (0xa2) and the SDK retries it until the first one is
// resolved. The retried request is the SDK's own: couchbase-cxx-client 1.3.2
// appends the durability frame again on every retry, so a retried durable
// write carries the same frame twice — which kv_engine accepts (it validates
// every frame and uses the first).
//
// "replica1" is not simulated: this test plays it over DCP, so it decides
// when each SyncWrite commits.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const {
  couchbase,
  Server,
  openDefault,
  keysInDistinctVbuckets,
  vbucketOf,
  track,
  waitFor,
  SILENT_REPLICA,
} = require('./support');

const { DurabilityLevel } = couchbase;

describe('writes to a key whose SyncWrite is in flight', () => {
  let server;
  let cluster;
  let collection;
  let replica;
  before(async () => {
    server = await Server.start(SILENT_REPLICA);
    ({ cluster, collection } = await openDefault(server));
    replica = await server.mcbp();
    await replica.dcpOpen('replica1');
  });
  after(async () => {
    replica?.close();
    await cluster?.close();
    await server?.stop();
  });

  // Each in its own vbucket, none written before.
  const [durableKey, plainKey] = keysInDistinctVbuckets('in-progress', 2, ['warm-up-missing-key']);

  const durability = async () => {
    const stats = await server.stats('durability');
    return {
      inFlight: Number(stats.sync_writes_in_flight),
      committed: Number(stats.sync_writes_committed),
    };
  };

  it('a durable write the SDK retries after SyncWriteInProgress commits in turn', async () => {
    const key = durableKey;
    const vb = vbucketOf(key);
    const first = await collection.upsert(key, 'committed');
    const s0 = BigInt(first.token.toJSON().sequence_number);

    const settled = [];
    const durable = { durabilityLevel: DurabilityLevel.Majority, timeout: 6000 };
    const a = track(() => collection.upsert(key, 'a', durable), settled, 'A');
    await waitFor('A in flight', async () => (await durability()).inFlight === 1);

    const b = track(() => collection.upsert(key, 'b', durable), settled, 'B');
    // Reads see the committed value while A is pending.
    assert.equal((await collection.get(key)).content, 'committed');

    // A's prepare is s0+1 (its commit s0+2): the replica acknowledges it.
    replica.seqnoAck(vb, s0 + 1n);
    await waitFor(
      "A committed and B's retry in flight (or B answered)",
      async () => {
        if (settled.includes('B')) return true;
        const d = await durability();
        return d.committed === 1 && d.inFlight === 1;
      },
    );
    // B's prepare is s0+3.
    replica.seqnoAck(vb, s0 + 3n);

    const [ra, rb] = await Promise.all([a, b]);
    assert.ok(ra.ok, `A: ${ra.error}`);
    assert.ok(rb.ok, `B (retried after SyncWriteInProgress): ${rb.error} ${JSON.stringify(rb.error?.context)}`);
    assert.deepEqual(settled, ['A', 'B']);
    assert.equal((await collection.get(key)).content, 'b');
    assert.deepEqual(replica.strays, [], 'every seqno ack was accepted');
  });

  it('a plain write the SDK retries after SyncWriteInProgress succeeds once the SyncWrite is resolved', async () => {
    const key = plainKey;
    const settled = [];
    const initial = await durability();
    const a = track(
      () => collection.upsert(key, 'a', { durabilityLevel: DurabilityLevel.Majority, timeout: 6000 }),
      settled,
      'A',
    );
    await waitFor('A in flight', async () => (await durability()).inFlight === initial.inFlight + 1);
    const c = track(() => collection.upsert(key, 'plain', { timeout: 6000 }), settled, 'C');
    replica.seqnoAck(vbucketOf(key), 1); // A's prepare: the vbucket's first write
    const [ra, rc] = await Promise.all([a, c]);
    assert.ok(ra.ok, `A: ${ra.error}`);
    assert.ok(rc.ok, `C: ${rc.error}`);
    // C was written after A committed. The order the two answers arrive in
    // is not asserted: A's commit is visible to C a moment before A's answer
    // is queued (in kv_engine too: VBucket::commit commits, then notifies the
    // cookie), so a retry landing in that moment is answered first. Once A's
    // answer is queued, it leaves before C's (server/connection.h, "Late
    // answers").
    const seqno = (r) => BigInt(r.value.token.toJSON().sequence_number);
    assert.ok(seqno(rc) > seqno(ra), `C's seqno ${seqno(rc)} after A's ${seqno(ra)}`);
    assert.deepEqual([...settled].sort(), ['A', 'C']);
    assert.equal((await collection.get(key)).content, 'plain');
  });
});
