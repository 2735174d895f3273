// SIGTERM answers every SyncWrite still waiting: each SDK write gets
// DurabilityAmbiguousError (at shutdown, not at its timeout), and the server
// exits 0.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const {
  couchbase,
  Server,
  openDefault,
  frameTimeoutMs,
  track,
  waitForDurabilityStat,
  SILENT_REPLICA,
  persistent,
} = require('./support');

const { DurabilityLevel } = couchbase;

describe('SIGTERM while SDK SyncWrites wait on a silent replica', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(persistent(SILENT_REPLICA));
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    server?.signal('SIGKILL');
  });

  it('answers every waiting write DurabilityAmbiguousError and exits 0', async () => {
    const N = 50;
    const TIMEOUT_MS = 10000; // the SDK sends 9000: far later than the shutdown
    const levels = [
      DurabilityLevel.Majority,
      DurabilityLevel.MajorityAndPersistOnMaster,
      DurabilityLevel.PersistToMajority,
    ];
    const settled = [];
    const writes = Array.from({ length: N }, (_, i) =>
      track(
        () =>
          collection.upsert(`sigterm-${i}`, i, {
            durabilityLevel: levels[i % levels.length],
            timeout: TIMEOUT_MS,
          }),
        settled,
        `sigterm-${i}`,
      ),
    );
    await waitForDurabilityStat(server, 'sync_writes_in_flight', N);
    const answeredBeforeSigterm = settled.length;
    server.signal('SIGTERM');

    const results = await Promise.all(writes);
    assert.equal(answeredBeforeSigterm, 0, 'nothing was answered before SIGTERM');
    assert.equal(new Set(settled).size, N, 'each write answered once');
    for (const r of results) {
      assert.ok(!r.ok, `${r.label} cannot commit`);
      assert.ok(r.error instanceof couchbase.DurabilityAmbiguousError, `${r.label}: ${r.error}`);
      assert.ok(
        r.elapsedMs < frameTimeoutMs(TIMEOUT_MS),
        `${r.label} was answered at its timeout (${r.elapsedMs} ms), not at shutdown`,
      );
    }
    const status = await server.waitExit();
    assert.deepEqual(
      { code: status.code, signal: status.signal },
      { code: 0, signal: null },
      server.stderr(),
    );
  });
});

describe('SIGTERM after SDK clients went away with SyncWrites waiting', () => {
  let server;
  before(async () => {
    server = await Server.start(persistent(SILENT_REPLICA));
  });
  after(() => {
    server?.signal('SIGKILL');
  });

  it('exits 0 without waiting for the departed connections to drain', async () => {
    // Three clients, each closed while its writes wait.
    for (let round = 0; round < 3; round++) {
      const { cluster, collection } = await openDefault(server);
      const writes = Array.from({ length: 10 }, (_, i) =>
        collection
          .upsert(`departed-${round}-${i}`, i, {
            durabilityLevel: DurabilityLevel.Majority,
            timeout: 10000,
          })
          .catch((err) => err),
      );
      await waitForDurabilityStat(server, 'sync_writes_in_flight', 10 * (round + 1));
      await cluster.close();
      for (const err of await Promise.all(writes)) {
        // Closing the cluster cancels what it was waiting for.
        assert.ok(err instanceof couchbase.RequestCanceledError, `${err}`);
      }
    }
    server.signal('SIGTERM');
    // Longer than the server's own drain limit (10 s), to see what it says.
    const status = await server.waitExit(15000);
    assert.deepEqual({ code: status.code, signal: status.signal }, { code: 0, signal: null });
    assert.doesNotMatch(server.stderr(), /did not drain/, 'a closed connection held up the shutdown');
  });
});
