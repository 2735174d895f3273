// Sub-document operations through the SDK: lookupIn and mutateIn with several
// specs, get with a projection and with its expiry (both lookupIn underneath),
// xattrs, and durable mutateIn (a SyncWrite: committed with a replica that
// acknowledges, DurabilityAmbiguousError with a silent one).
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { couchbase, Server, openDefault, FAST_REPLICA, SILENT_REPLICA } = require('./support');

const { LookupInSpec, MutateInSpec, DurabilityLevel } = couchbase;

describe('sub-document operations', () => {
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

  it('lookupIn answers each spec, a missing path only for its own spec', async () => {
    const stored = await collection.upsert('sd-lookup', { a: 1, list: [1, 2, 3], o: { x: 'y' } });
    const result = await collection.lookupIn('sd-lookup', [
      LookupInSpec.get('o.x'),
      LookupInSpec.exists('a'),
      LookupInSpec.exists('nope'),
      LookupInSpec.count('list'),
      LookupInSpec.get('list[-1]'),
    ]);
    assert.equal(result.cas.toString(), stored.cas.toString());
    assert.equal(result.content[0].value, 'y');
    assert.equal(result.content[1].value, true);
    assert.equal(result.content[2].value, false);
    assert.equal(result.content[3].value, 3);
    assert.equal(result.content[4].value, 3);
    await assert.rejects(
      collection.lookupIn('sd-never-written', [LookupInSpec.get('a')]),
      couchbase.DocumentNotFoundError,
    );
  });

  it('mutateIn applies several specs at once, and none when one fails', async () => {
    await collection.upsert('sd-mutate', { a: 1, list: [1] });
    const result = await collection.mutateIn('sd-mutate', [
      MutateInSpec.upsert('b.c', 'deep', { createPath: true }),
      MutateInSpec.replace('a', 2),
      MutateInSpec.arrayAppend('list', 2),
      MutateInSpec.arrayPrepend('list', 0),
      MutateInSpec.increment('n', 5),
      MutateInSpec.insert('fresh', true),
    ]);
    assert.ok(result.cas);
    assert.equal(result.content[4].value, 5);
    assert.deepEqual((await collection.get('sd-mutate')).content, {
      a: 2,
      list: [0, 1, 2],
      b: { c: 'deep' },
      n: 5,
      fresh: true,
    });
    await assert.rejects(
      collection.mutateIn('sd-mutate', [MutateInSpec.upsert('z', 1), MutateInSpec.replace('missing', 1)]),
      couchbase.PathNotFoundError,
    );
    assert.equal((await collection.get('sd-mutate')).content.z, undefined, 'all or nothing');
    await collection.mutateIn('sd-mutate', [MutateInSpec.remove('fresh')]);
    assert.equal((await collection.get('sd-mutate')).content.fresh, undefined);
  });

  it('mutateIn with upsert semantics creates the document; with a stale CAS is CasMismatchError', async () => {
    const created = await collection.mutateIn('sd-created', [MutateInSpec.upsert('k', 'v')], {
      storeSemantics: couchbase.StoreSemantics.Upsert,
    });
    assert.deepEqual((await collection.get('sd-created')).content, { k: 'v' });
    await collection.mutateIn('sd-created', [MutateInSpec.upsert('k', 'w')]);
    await assert.rejects(
      collection.mutateIn('sd-created', [MutateInSpec.upsert('k', 'x')], { cas: created.cas }),
      couchbase.CasMismatchError,
    );
    await assert.rejects(
      collection.mutateIn('sd-created', [MutateInSpec.upsert('k', 'x')], {
        storeSemantics: couchbase.StoreSemantics.Insert,
      }),
      couchbase.DocumentExistsError,
    );
  });

  it('get with project returns only the projected paths', async () => {
    await collection.upsert('sd-project', { name: 'ann', age: 7, address: { city: 'Oslo', zip: 1 } });
    const result = await collection.get('sd-project', { project: ['name', 'address.city'] });
    assert.deepEqual(result.content, { name: 'ann', address: { city: 'Oslo' } });
  });

  it('get withExpiry reads the document expiry ($document.exptime)', async () => {
    await collection.upsert('sd-expiry', { e: 1 }, { expiry: 3600 });
    const result = await collection.get('sd-expiry', { withExpiry: true });
    assert.deepEqual(result.content, { e: 1 });
    // The SDK (4.7) reports it as seconds since the Unix epoch.
    assert.equal(typeof result.expiryTime, 'number', `expiryTime ${result.expiryTime}`);
    const seconds = result.expiryTime - Date.now() / 1000;
    assert.ok(seconds > 3500 && seconds <= 3601, `expires in ${seconds} s`);
  });

  it('xattrs: written by mutateIn, hidden from get, read back by lookupIn', async () => {
    await collection.upsert('sd-xattr', { body: true });
    await collection.mutateIn('sd-xattr', [
      MutateInSpec.upsert('meta.owner', 'ann', { xattr: true, createPath: true }),
      MutateInSpec.upsert('meta.cas', couchbase.MutateInMacro.Cas, { xattr: true, createPath: true }),
      MutateInSpec.upsert('visible', 1),
    ]);
    const plain = await collection.get('sd-xattr');
    assert.deepEqual(plain.content, { body: true, visible: 1 });
    const result = await collection.lookupIn('sd-xattr', [
      LookupInSpec.get('meta.owner', { xattr: true }),
      LookupInSpec.get('$document.CAS', { xattr: true }),
      LookupInSpec.get('visible'),
    ]);
    assert.equal(result.content[0].value, 'ann');
    assert.match(result.content[1].value, /^0x[0-9a-f]{16}$/);
    assert.equal(result.content[2].value, 1);
  });

  it('MutateInMacro.SeqNo is UnsupportedOperationError (the server cannot fill it yet)', async () => {
    await collection.upsert('sd-seqno', { a: 1 });
    await assert.rejects(
      collection.mutateIn('sd-seqno', [MutateInSpec.upsert('s', couchbase.MutateInMacro.SeqNo, { xattr: true })]),
      couchbase.UnsupportedOperationError,
    );
    assert.deepEqual((await collection.get('sd-seqno')).content, { a: 1 });
  });

  it('a durable mutateIn commits (a SyncWrite acknowledged by the replica)', async () => {
    await collection.upsert('sd-durable', { n: 0 });
    const before = await server.stats('durability');
    const result = await collection.mutateIn('sd-durable', [MutateInSpec.increment('n', 3)], {
      durabilityLevel: DurabilityLevel.Majority,
    });
    assert.equal(result.content[0].value, 3);
    const after = await server.stats('durability');
    assert.equal(
      Number(after.sync_writes_committed) - Number(before.sync_writes_committed),
      1,
      'the mutateIn was a SyncWrite',
    );
    assert.deepEqual((await collection.get('sd-durable')).content, { n: 3 });
  });
});

// Couchbase transactions run on durable sub-document mutations with xattrs
// (staged values and the ATR). Replacing documents works; inserting does not
// yet: the SDK stages an insert as a tombstone (CreateAsDeleted), which the
// server refuses because it keeps no tombstones.
describe('transactions', () => {
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

  it('a transaction that replaces two documents commits both', async () => {
    await collection.upsert('txn-a', { v: 1 });
    await collection.upsert('txn-b', { v: 2 });
    await cluster.transactions().run(
      async (ctx) => {
        await ctx.replace(await ctx.get(collection, 'txn-a'), { v: 10 });
        await ctx.replace(await ctx.get(collection, 'txn-b'), { v: 20 });
      },
      { timeout: 10000 },
    );
    assert.deepEqual((await collection.get('txn-a')).content, { v: 10 });
    assert.deepEqual((await collection.get('txn-b')).content, { v: 20 });
  });

  it('a transaction whose lambda throws leaves the documents untouched', async () => {
    await collection.upsert('txn-c', { v: 1 });
    await collection.upsert('txn-d', { v: 2 });
    await assert.rejects(
      cluster.transactions().run(
        async (ctx) => {
          await ctx.replace(await ctx.get(collection, 'txn-c'), { v: 10 });
          await ctx.replace(await ctx.get(collection, 'txn-d'), { v: 20 });
          throw new Error('the application changes its mind');
        },
        { timeout: 10000 },
      ),
      couchbase.TransactionFailedError,
    );
    assert.deepEqual((await collection.get('txn-c')).content, { v: 1 });
    assert.deepEqual((await collection.get('txn-d')).content, { v: 2 });
  });

  it('an insert in a transaction fails (CreateAsDeleted is not supported)', async () => {
    await assert.rejects(
      cluster.transactions().run(
        async (ctx) => {
          await ctx.insert(collection, 'txn-new', { v: 3 });
        },
        { timeout: 5000 },
      ),
      couchbase.TransactionFailedError,
    );
    await assert.rejects(collection.get('txn-new'), couchbase.DocumentNotFoundError);
  });
});

describe('a durable mutateIn with a silent replica', () => {
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

  it('is DurabilityAmbiguousError and leaves the document as it was', async () => {
    await collection.upsert('sd-silent', { n: 0 });
    await assert.rejects(
      collection.mutateIn('sd-silent', [MutateInSpec.upsert('m', 1)], {
        durabilityLevel: DurabilityLevel.Majority,
        timeout: 1000,
      }),
      couchbase.DurabilityAmbiguousError,
    );
    assert.deepEqual((await collection.get('sd-silent')).content, { n: 0 });
  });
});
