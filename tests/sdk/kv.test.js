// Plain KV through the SDK: CAS, flags (the transcoder's value types), expiry,
// exists, touch, and the SDK's own error for each refusal.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { couchbase, Server, openDefault, waitFor, FAST_REPLICA } = require('./support');

describe('KV operations with CAS', () => {
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

  it('upsert, then get returns the value and the same CAS', async () => {
    const stored = await collection.upsert('kv-upsert', { n: 1 });
    assert.ok(stored.cas, 'upsert answers a CAS');
    const read = await collection.get('kv-upsert');
    assert.deepEqual(read.content, { n: 1 });
    assert.equal(read.cas.toString(), stored.cas.toString());
    const again = await collection.upsert('kv-upsert', { n: 2 });
    assert.notEqual(again.cas.toString(), stored.cas.toString(), 'every mutation gets a new CAS');
    assert.deepEqual((await collection.get('kv-upsert')).content, { n: 2 });
  });

  it('get of a missing key is DocumentNotFoundError', async () => {
    await assert.rejects(collection.get('kv-never-written'), couchbase.DocumentNotFoundError);
  });

  it('insert creates, and insert of an existing key is DocumentExistsError', async () => {
    const inserted = await collection.insert('kv-insert', 'first');
    assert.ok(inserted.cas);
    await assert.rejects(collection.insert('kv-insert', 'second'), couchbase.DocumentExistsError);
    assert.equal((await collection.get('kv-insert')).content, 'first');
  });

  it('replace with the current CAS succeeds; with a stale CAS is CasMismatchError', async () => {
    const first = await collection.upsert('kv-replace', { v: 1 });
    const second = await collection.replace('kv-replace', { v: 2 }, { cas: first.cas });
    assert.notEqual(second.cas.toString(), first.cas.toString());
    await assert.rejects(
      collection.replace('kv-replace', { v: 3 }, { cas: first.cas }),
      couchbase.CasMismatchError,
    );
    const read = await collection.get('kv-replace');
    assert.deepEqual(read.content, { v: 2 });
    assert.equal(read.cas.toString(), second.cas.toString());
  });

  it('replace without CAS replaces; replace of a missing key is DocumentNotFoundError', async () => {
    await collection.upsert('kv-replace-nocas', 1);
    await collection.replace('kv-replace-nocas', 2);
    assert.equal((await collection.get('kv-replace-nocas')).content, 2);
    await assert.rejects(
      collection.replace('kv-replace-missing', 1),
      couchbase.DocumentNotFoundError,
    );
  });

  it('remove with a stale CAS is CasMismatchError; with the current CAS removes', async () => {
    const first = await collection.upsert('kv-remove', 'x');
    const second = await collection.upsert('kv-remove', 'y');
    await assert.rejects(
      collection.remove('kv-remove', { cas: first.cas }),
      couchbase.CasMismatchError,
    );
    const removed = await collection.remove('kv-remove', { cas: second.cas });
    assert.ok(removed.cas);
    await assert.rejects(collection.get('kv-remove'), couchbase.DocumentNotFoundError);
    await assert.rejects(collection.remove('kv-remove'), couchbase.DocumentNotFoundError);
  });

  it('exists answers true with the CAS, and false for a missing or removed key', async () => {
    const stored = await collection.upsert('kv-exists', { here: true });
    const yes = await collection.exists('kv-exists');
    assert.equal(yes.exists, true);
    assert.equal(yes.cas.toString(), stored.cas.toString());
    assert.equal((await collection.exists('kv-exists-never')).exists, false);
    await collection.remove('kv-exists');
    assert.equal((await collection.exists('kv-exists')).exists, false);
  });

  it('touch answers a new CAS and keeps the value; touch of a missing key is DocumentNotFoundError', async () => {
    const stored = await collection.upsert('kv-touch', { t: 1 });
    const touched = await collection.touch('kv-touch', 3600);
    assert.ok(touched.cas);
    assert.notEqual(touched.cas.toString(), stored.cas.toString());
    const read = await collection.get('kv-touch');
    assert.deepEqual(read.content, { t: 1 });
    assert.equal(read.cas.toString(), touched.cas.toString());
    await assert.rejects(collection.touch('kv-touch-missing', 10), couchbase.DocumentNotFoundError);
  });

  it('getAndTouch returns the value (with its type) and a CAS', async () => {
    await collection.upsert('kv-gat', 'a string');
    const result = await collection.getAndTouch('kv-gat', 3600);
    assert.equal(result.content, 'a string');
    assert.equal((await collection.get('kv-gat')).cas.toString(), result.cas.toString());
    await assert.rejects(collection.getAndTouch('kv-gat-missing', 10), couchbase.DocumentNotFoundError);
  });

  it('an expired document is never returned (upsert with expiry, and touch)', async () => {
    await collection.upsert('kv-expiry-upsert', 'short-lived', { expiry: 1 });
    await collection.upsert('kv-expiry-touch', 'long-lived');
    await collection.touch('kv-expiry-touch', 1);
    assert.equal((await collection.get('kv-expiry-touch')).content, 'long-lived');
    // Expiry has a one-second resolution: wait for the event, with a guard.
    for (const key of ['kv-expiry-upsert', 'kv-expiry-touch']) {
      await waitFor(
        `${key} to expire`,
        () =>
          collection.get(key).then(
            () => false,
            (err) => {
              if (err instanceof couchbase.DocumentNotFoundError) return true;
              throw err;
            },
          ),
        5000,
      );
      assert.equal((await collection.exists(key)).exists, false);
    }
  });

  it('a mutation answers a mutation token (MutationSeqno)', async () => {
    const first = await collection.upsert('kv-token', 1);
    const second = await collection.upsert('kv-token', 2);
    assert.ok(first.token, 'upsert carries a mutation token');
    assert.ok(second.token, 'upsert carries a mutation token');
    const a = first.token.toJSON();
    const b = second.token.toJSON();
    assert.equal(a.partition_uuid, b.partition_uuid, 'same vbucket, same uuid');
    assert.notEqual(String(a.partition_uuid), '0', 'the vbucket has a uuid');
    assert.ok(BigInt(b.sequence_number) > BigInt(a.sequence_number), 'seqnos increase');
  });
});

describe('values round-trip with their type (flags)', () => {
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

  const cases = [
    ['a JSON object', { a: 1, b: [true, null, 'x'], c: { d: 1.5 } }],
    ['a JSON array', [1, 'two', { three: 3 }]],
    ['a JSON number', 42],
    ['a string', 'hello, world'],
    ['a string that looks like JSON', '{"not":"an object"}'],
    ['an empty string', ''],
    ['a binary Buffer', Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7f, 0x00])],
    ['an empty Buffer', Buffer.alloc(0)],
  ];
  for (const [name, value] of cases) {
    it(`${name}`, async () => {
      const key = `type-${name}`;
      await collection.upsert(key, value);
      const read = await collection.get(key);
      if (Buffer.isBuffer(value)) {
        assert.ok(Buffer.isBuffer(read.content), `got ${typeof read.content}`);
        assert.deepEqual([...read.content], [...value]);
      } else {
        assert.equal(typeof read.content, typeof value);
        assert.deepEqual(read.content, value);
      }
      // The same through replace and getAndTouch.
      await collection.replace(key, value);
      const touched = await collection.getAndTouch(key, 3600);
      if (Buffer.isBuffer(value)) {
        assert.ok(Buffer.isBuffer(touched.content));
        assert.deepEqual([...touched.content], [...value]);
      } else {
        assert.deepEqual(touched.content, value);
      }
    });
  }
});

describe('operations out of scope answer UnsupportedOperationError', () => {
  let server;
  let cluster;
  let bucket;
  let collection;
  before(async () => {
    server = await Server.start(FAST_REPLICA);
    ({ cluster, bucket, collection } = await openDefault(server));
    await collection.upsert('unsupported', { a: 1 });
  });
  after(async () => {
    await cluster?.close();
    await server?.stop();
  });

  const timeout = 3000;
  const cases = [
    ['getAndLock', (c) => c.getAndLock('unsupported', 5, { timeout })],
  ];
  for (const [name, op] of cases) {
    it(name, async () => {
      await assert.rejects(op(collection), couchbase.UnsupportedOperationError);
      // The connection keeps working.
      assert.deepEqual((await collection.get('unsupported')).content, { a: 1 });
    });
  }

  it('a collection other than the default', async () => {
    const other = bucket.scope('inventory').collection('items');
    await assert.rejects(other.get('k', { timeout }), couchbase.UnsupportedOperationError);
  });
});

describe('binary operations: counters, append and prepend', () => {
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

  it('increment creates the counter with its initial value, then counts; decrement stops at 0', async () => {
    const counter = collection.binary();
    assert.equal(Number((await counter.increment('counter', 1, { initial: 10 })).value), 10);
    assert.equal(Number((await counter.increment('counter', 5)).value), 15);
    assert.equal(Number((await counter.decrement('counter', 20)).value), 0);
    await assert.rejects(counter.increment('no-counter', 1), couchbase.DocumentNotFoundError);
  });

  it('a durable increment commits', async () => {
    const r = await collection.binary().increment('durable-counter', 2, {
      initial: 7,
      durabilityLevel: couchbase.DurabilityLevel.Majority,
    });
    assert.equal(Number(r.value), 7);
  });

  it('append and prepend keep the document binary', async () => {
    await collection.upsert('bin', Buffer.from('mid'));
    await collection.binary().append('bin', Buffer.from('>'));
    await collection.binary().prepend('bin', Buffer.from('<'));
    const got = await collection.get('bin');
    assert.ok(Buffer.isBuffer(got.content));
    assert.equal(got.content.toString(), '<mid>');
    await assert.rejects(
      collection.binary().append('no-bin', Buffer.from('x')),
      couchbase.DocumentNotFoundError,
    );
  });
});
