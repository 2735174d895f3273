// A vbucket that leaves the active state while an SDK SyncWrite waits on it:
// the write is answered DurabilityAmbiguousError at once (not at its
// timeout); the SDK then finds no active node for that vbucket (the
// NOT_MY_VBUCKET answer carries the new cluster map) until the vbucket is
// active again, when it routes to it by itself.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const {
  couchbase,
  Server,
  openDefault,
  frameTimeoutMs,
  track,
  vbucketOf,
  waitFor,
  waitForDurabilityStat,
  SILENT_REPLICA,
} = require('./support');

describe('a vbucket leaves active while an SDK SyncWrite waits', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(SILENT_REPLICA);
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it('answers it DurabilityAmbiguousError; the SDK follows the vbucket back', async () => {
    const key = 'vbucket-state-key';
    const vb = String(vbucketOf(key));
    const settled = [];
    const TIMEOUT_MS = 10000;
    const write = track(
      () =>
        collection.upsert(key, 1, {
          durabilityLevel: couchbase.DurabilityLevel.Majority,
          timeout: TIMEOUT_MS,
        }),
      settled,
      'write',
    );
    await waitForDurabilityStat(server, 'sync_writes_in_flight', 1);

    const toReplica = await server.cli('set-vbucket', vb, 'replica');
    assert.equal(toReplica.code, 0, toReplica.stderr);
    const result = await write;
    assert.ok(!result.ok);
    assert.ok(result.error instanceof couchbase.DurabilityAmbiguousError, `${result.error}`);
    assert.ok(
      result.elapsedMs < frameTimeoutMs(TIMEOUT_MS),
      `answered at its timeout (${result.elapsedMs} ms), not when the vbucket left active`,
    );
    const stats = await server.stats('durability');
    assert.equal(Number(stats.sync_writes_ambiguous_other), 1);
    assert.equal(Number(stats.sync_writes_aborted_timeout), 0);

    // No node holds the vbucket: the SDK retries until its timeout.
    await assert.rejects(collection.get(key, { timeout: 1000 }), (err) => {
      assert.ok(err instanceof couchbase.UnambiguousTimeoutError, `${err}`);
      assert.ok(
        err.context.retry_reasons.includes('key_value_not_my_vbucket'),
        JSON.stringify(err.context),
      );
      return true;
    });

    // Active again: the SDK finds it by itself (the write was aborted, so
    // the key is absent) and writes to it.
    const toActive = await server.cli('set-vbucket', vb, 'active');
    assert.equal(toActive.code, 0, toActive.stderr);
    await waitFor('the SDK to reach the vbucket again', () =>
      collection.get(key, { timeout: 1000 }).then(
        () => {
          throw new Error('the aborted write is visible');
        },
        (err) => {
          if (err instanceof couchbase.DocumentNotFoundError) return true;
          if (err instanceof couchbase.UnambiguousTimeoutError) return false;
          throw err;
        },
      ),
    );
    await collection.upsert(key, 'plain');
    assert.equal((await collection.get(key)).content, 'plain');
  });
});
