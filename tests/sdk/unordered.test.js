// UnorderedExecution: the SDK sends every operation of a bucket over one
// connection per node and negotiates UnorderedExecution, so a SyncWrite that
// waits on a silent replica must not hold back the answers behind it.
//
// The replica "replica1" is not simulated: this test plays it over DCP and
// acknowledges the prepares of one vbucket only (the other key's), so one
// SyncWrite commits while the first still waits. Asserted: the order in
// which the SDK's promises settle, not timings.
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

describe('a SyncWrite waiting on a silent replica holds nothing back', () => {
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

  it('a GET and a durable write to another key complete before the waiting one', async () => {
    // Each key in its own vbucket, none written before: the durable write to
    // `other` is its vbucket's first prepare, seqno 1.
    const [waiting, readable, other] = keysInDistinctVbuckets('unordered', 3, [
      'warm-up-missing-key',
    ]);
    await collection.upsert(readable, { plain: true });

    const settled = [];
    const durable = { durabilityLevel: DurabilityLevel.Majority, timeout: 4000 };
    const waitingWrite = track(
      () => collection.upsert(waiting, 'waits', durable),
      settled,
      'waiting SyncWrite',
    );
    // The server holds the first SyncWrite before anything is sent behind it.
    const inFlight = async () => Number((await server.stats('durability')).sync_writes_in_flight);
    await waitFor('the first SyncWrite to be in flight', async () => (await inFlight()) === 1);

    const get = track(() => collection.get(readable, { timeout: 4000 }), settled, 'GET');
    const otherWrite = track(
      () => collection.upsert(other, 'commits', durable),
      settled,
      'other SyncWrite',
    );

    // Once the server holds the second prepare, the replica acknowledges its
    // vbucket (and only it).
    await waitFor(
      'the second SyncWrite to be in flight (or the first to be answered)',
      async () => settled.includes('waiting SyncWrite') || (await inFlight()) === 2,
    );
    replica.seqnoAck(vbucketOf(other), 1);

    const results = await Promise.all([waitingWrite, get, otherWrite]);
    const [w, g, o] = results;
    assert.ok(g.ok, `GET failed: ${g.error}`);
    assert.deepEqual(g.value.content, { plain: true });
    assert.ok(o.ok, `the other SyncWrite failed: ${o.error}`);
    assert.ok(!w.ok, 'the waiting SyncWrite cannot commit');
    assert.ok(w.error instanceof couchbase.DurabilityAmbiguousError, `got ${w.error}`);
    assert.equal(
      settled.at(-1),
      'waiting SyncWrite',
      `the GET and the other SyncWrite must be answered before the waiting one: ${settled}`,
    );
    assert.deepEqual(replica.strays, [], 'the seqno ack was accepted');
    assert.equal((await collection.get(other)).content, 'commits');
  });
});
