// A durability timeout mode switch (syncwrite-cli set-param) while SDK writes
// wait changes no outcome: the writes the replica acknowledges after the
// switch commit, the others are answered DurabilityAmbiguousError once, and
// never before the timeout the SDK sent.
//
// "replica1" is not simulated: this test plays it over DCP and acknowledges
// the vbuckets of half the keys, after the switch.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const {
  couchbase,
  Server,
  openDefault,
  configWith,
  frameTimeoutMs,
  keysInDistinctVbuckets,
  vbucketOf,
  track,
  waitForDurabilityStat,
} = require('./support');

const { DurabilityLevel } = couchbase;
const PER_OUTCOME = 25;
const TIMEOUT_MS = 3000; // the SDK sends 2700

for (const [from, to] of [
  ['event-driven', 'polling'],
  ['polling', 'event-driven'],
]) {
  describe(`switching ${from} -> ${to} while SDK writes wait`, () => {
    let server;
    let cluster;
    let collection;
    let replica;
    before(async () => {
      server = await Server.start(
        configWith({
          durability_timeout_mode: from,
          durability_timeout_task_interval: 10,
          replicas: ['replica1'],
        }),
      );
      ({ cluster, collection } = await openDefault(server));
      replica = await server.mcbp();
      await replica.dcpOpen('replica1');
    });
    after(async () => {
      replica?.close();
      await cluster?.close();
      await server?.stop();
    });

    it('changes no outcome', async () => {
      // Fresh vbuckets: each key's durable write is its vbucket's seqno 1.
      const keys = keysInDistinctVbuckets(`switch-${from}`, 2 * PER_OUTCOME, [
        'warm-up-missing-key',
      ]);
      const toCommit = keys.slice(0, PER_OUTCOME);
      const toTimeOut = keys.slice(PER_OUTCOME);
      const settled = [];
      const start = process.hrtime.bigint();
      const writes = keys.map((key) =>
        track(
          () =>
            collection.upsert(key, { key }, {
              durabilityLevel: DurabilityLevel.Majority,
              timeout: TIMEOUT_MS,
            }),
          settled,
          key,
        ),
      );
      await waitForDurabilityStat(server, 'sync_writes_in_flight', keys.length);

      const switched = await server.cli('set-param', 'durability_timeout_mode', to);
      assert.equal(switched.code, 0, `set-param failed: ${switched.stderr}`);
      assert.equal((await server.stats('durability')).durability_mode, to);

      for (const key of toCommit) replica.seqnoAck(vbucketOf(key), 1);

      const results = await Promise.all(writes);
      const elapsedAllMs = Number(process.hrtime.bigint() - start) / 1e6;
      assert.equal(settled.length, keys.length, 'each write answered once');
      assert.equal(new Set(settled).size, keys.length, 'each write answered once');
      for (const r of results.slice(0, PER_OUTCOME)) {
        assert.ok(r.ok, `${r.label} should commit: ${r.error}`);
      }
      for (const r of results.slice(PER_OUTCOME)) {
        assert.ok(!r.ok, `${r.label} cannot commit`);
        assert.ok(r.error instanceof couchbase.DurabilityAmbiguousError, `${r.label}: ${r.error}`);
        assert.ok(
          r.elapsedMs >= frameTimeoutMs(TIMEOUT_MS),
          `${r.label} answered after ${r.elapsedMs} ms, before the ${frameTimeoutMs(TIMEOUT_MS)} ms sent`,
        );
      }
      assert.ok(elapsedAllMs >= frameTimeoutMs(TIMEOUT_MS));

      const stats = await server.stats('durability');
      assert.equal(Number(stats.sync_writes_committed), PER_OUTCOME);
      assert.equal(Number(stats.sync_writes_aborted_timeout), PER_OUTCOME);
      assert.equal(Number(stats.sync_writes_in_flight), 0);
      assert.equal(Number(stats.timeout_mode_switches), 1);
      assert.deepEqual(replica.strays, [], 'every seqno ack was accepted');
      for (const key of toCommit) assert.deepEqual((await collection.get(key)).content, { key });
      for (const key of toTimeOut) {
        await assert.rejects(collection.get(key), couchbase.DocumentNotFoundError);
      }
    });
  });
}
