// Durable writes through the SDK: every level commits with a replica that
// acknowledges; a silent replica makes them DurabilityAmbiguousError, never
// before the timeout the SDK sent; an undefined replica (null in the chain)
// makes them DurabilityImpossibleError; 1,000 in flight from one client all
// commit.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const {
  couchbase,
  Server,
  openDefault,
  configWith,
  frameTimeoutMs,
  FAST_REPLICA,
  SILENT_REPLICA,
  persistent,
} = require('./support');

const { DurabilityLevel } = couchbase;
const LEVELS = [
  ['Majority', DurabilityLevel.Majority],
  ['MajorityAndPersistOnMaster', DurabilityLevel.MajorityAndPersistOnMaster],
  ['PersistToMajority', DurabilityLevel.PersistToMajority],
];

describe('durable writes with a replica that acknowledges (a couchbase bucket)', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(persistent(FAST_REPLICA));
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  for (const [name, durabilityLevel] of LEVELS) {
    it(`${name}: upsert, insert, replace and remove commit`, async () => {
      const key = `durable-${name}`;
      const upserted = await collection.upsert(key, { level: name }, { durabilityLevel });
      assert.ok(upserted.cas);
      assert.deepEqual((await collection.get(key)).content, { level: name });

      const inserted = await collection.insert(`${key}-insert`, 'inserted', { durabilityLevel });
      assert.ok(inserted.cas);
      await assert.rejects(
        collection.insert(`${key}-insert`, 'again', { durabilityLevel }),
        couchbase.DocumentExistsError,
      );

      const replaced = await collection.replace(key, { level: name, replaced: true }, {
        durabilityLevel,
        cas: upserted.cas,
      });
      const read = await collection.get(key);
      assert.deepEqual(read.content, { level: name, replaced: true });
      assert.equal(read.cas.toString(), replaced.cas.toString());

      await assert.rejects(
        collection.replace(key, 'stale', { durabilityLevel, cas: upserted.cas }),
        couchbase.CasMismatchError,
      );
      await assert.rejects(
        collection.remove(key, { durabilityLevel, cas: upserted.cas }),
        couchbase.CasMismatchError,
      );

      await collection.remove(key, { durabilityLevel, cas: replaced.cas });
      await assert.rejects(collection.get(key), couchbase.DocumentNotFoundError);
      await assert.rejects(
        collection.remove(key, { durabilityLevel }),
        couchbase.DocumentNotFoundError,
      );
    });
  }
});

// A durable upsert of `key` with operation timeout `timeout` against a silent
// replica: DurabilityAmbiguousError no earlier than the frame's timeout.
async function expectAmbiguousNotEarly(collection, key, durabilityLevel, timeout) {
  const start = process.hrtime.bigint();
  await assert.rejects(
    collection.upsert(key, { waits: true }, { durabilityLevel, timeout }),
    couchbase.DurabilityAmbiguousError,
  );
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  assert.ok(
    elapsedMs >= frameTimeoutMs(timeout),
    `${key} answered after ${elapsedMs.toFixed(1)} ms, before the ${frameTimeoutMs(timeout)} ms the SDK sent`,
  );
}

for (const mode of ['event-driven', 'polling']) {
  describe(`a silent replica (${mode})`, () => {
    let server;
    let cluster;
    let collection;
    before(async () => {
      const config = persistent(
        configWith({
          durability_timeout_mode: mode,
          durability_timeout_task_interval: 1, // polling: check every ms, the closest to the deadline
          replicas: ['replica1'],
        }),
      );
      server = await Server.start(config);
      ({ cluster, collection } = await openDefault(server));
    });
    after(async () => {
      await cluster?.close();
      await server?.stop();
    });

    it('answers every level DurabilityAmbiguousError, no earlier than the timeout sent', async () => {
      // The SDK sends 0.9 × 2000 = 1800 ms in the durability frame. Ten
      // writes per level, each in flight on its own.
      const PER_LEVEL = 10;
      await Promise.all(
        LEVELS.flatMap(([name, level]) =>
          Array.from({ length: PER_LEVEL }, (_, i) =>
            expectAmbiguousNotEarly(collection, `silent-${mode}-${name}-${i}`, level, 2000),
          ),
        ),
      );
      const stats = await server.stats('durability');
      assert.equal(Number(stats.sync_writes_aborted_timeout), LEVELS.length * PER_LEVEL);
      assert.equal(Number(stats.sync_writes_in_flight), 0);
    });

    it('a plain write still succeeds at once', async () => {
      await collection.upsert(`silent-${mode}-plain`, 'plain');
      assert.equal((await collection.get(`silent-${mode}-plain`)).content, 'plain');
    });
  });
}

describe('an ephemeral bucket', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(FAST_REPLICA);
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it('refuses the persist levels (DurabilityLevelNotAvailableError) and commits Majority', async () => {
    for (const [name, durabilityLevel] of LEVELS.slice(1)) {
      await assert.rejects(
        collection.upsert(`ephemeral-${name}`, 'v', { durabilityLevel }),
        couchbase.DurabilityLevelNotAvailableError,
      );
      await assert.rejects(collection.get(`ephemeral-${name}`), couchbase.DocumentNotFoundError);
    }
    await collection.upsert('ephemeral-majority', 'v', { durabilityLevel: DurabilityLevel.Majority });
    assert.equal((await collection.get('ephemeral-majority')).content, 'v');
  });
});

describe('an undefined replica (null in the chain)', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(persistent(configWith({ replicas: [null] })));
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  for (const [name, durabilityLevel] of LEVELS) {
    it(`${name}: DurabilityImpossibleError`, async () => {
      await assert.rejects(
        collection.upsert(`impossible-${name}`, 1, { durabilityLevel, timeout: 3000 }),
        couchbase.DurabilityImpossibleError,
      );
      await assert.rejects(collection.get(`impossible-${name}`), couchbase.DocumentNotFoundError);
    });
  }

  it('a plain write still succeeds', async () => {
    await collection.upsert('impossible-plain', 'plain');
    assert.equal((await collection.get('impossible-plain')).content, 'plain');
  });
});

describe('1,000 concurrent durable upserts from one client', () => {
  let server;
  let cluster;
  let collection;
  before(async () => {
    server = await Server.start(FAST_REPLICA);
    ({ cluster, collection } = await openDefault(server));
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it('all commit, each answered once', async () => {
    const N = 1000;
    const answers = new Array(N).fill(0);
    const results = await Promise.allSettled(
      Array.from({ length: N }, (_, i) =>
        collection
          .upsert(`many-${i}`, { i }, { durabilityLevel: DurabilityLevel.Majority, timeout: 10000 })
          .finally(() => {
            answers[i]++;
          }),
      ),
    );
    const failures = results.filter((r) => r.status === 'rejected');
    assert.equal(failures.length, 0, `first failure: ${failures[0]?.reason}`);
    assert.ok(answers.every((n) => n === 1));
    // The server agrees: exactly N committed, nothing left in flight.
    const stats = await server.stats('durability');
    assert.equal(Number(stats.sync_writes_committed), N);
    assert.equal(Number(stats.sync_writes_in_flight), 0);
    // And every document reads back.
    const reads = await Promise.all(
      Array.from({ length: N }, (_, i) => collection.get(`many-${i}`)),
    );
    reads.forEach((r, i) => assert.deepEqual(r.content, { i }));
  });
});
