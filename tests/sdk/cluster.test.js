// The Couchbase Node SDK against a cluster of two syncwrite-server processes
// (one replica each way, fed over DCP): it reads the cluster map with both
// nodes, routes every key to its active node, durable writes at each level
// commit once the other process holds them, and getAnyReplica /
// getAllReplicas read the replica's copy.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { couchbase, Server, openDefault, USERS, USER, waitFor } = require('./support');

const { DurabilityLevel } = couchbase;

describe('a cluster of two processes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncwrite-sdk-cluster-'));
  const portFile = (name) => path.join(dir, `${name}.port`);
  const config = {
    users: USERS,
    cluster: {
      replication_user: USER,
      nodes: {
        n1: { host: '127.0.0.1', port_file: portFile('n1') },
        n2: { host: '127.0.0.1', port_file: portFile('n2') },
      },
    },
    buckets: { default: { num_replicas: 1 } },
  };
  const nodes = [];
  let cluster;
  let collection;

  before(async () => {
    for (const name of ['n1', 'n2']) {
      nodes.push(await Server.start(config, ['--node', name], portFile(name)));
    }
    // Each node streams its 512 replica vbuckets from the other.
    for (const node of nodes) {
      await waitFor('replication streams', async () => {
        const stats = await node.stats();
        return stats.replication_streams === '512';
      });
    }
    ({ cluster, collection } = await openDefault(nodes[0]));
  });
  after(async () => {
    await cluster?.close();
    for (const node of nodes) await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, durabilityLevel] of [
    ['Majority', DurabilityLevel.Majority],
    ['MajorityAndPersistOnMaster', DurabilityLevel.MajorityAndPersistOnMaster],
    ['PersistToMajority', DurabilityLevel.PersistToMajority],
  ]) {
    it(`${name}: durable writes to keys of both nodes commit and read back`, async () => {
      const keys = Array.from({ length: 20 }, (_, i) => `cluster-${name}-${i}`);
      await Promise.all(keys.map((key) => collection.upsert(key, { key }, { durabilityLevel })));
      for (const key of keys) assert.deepEqual((await collection.get(key)).content, { key });
      // Both nodes took writes: the SDK routed by the map, not to the one it
      // bootstrapped from.
      for (const node of nodes) {
        const stats = await node.stats('durability');
        assert.ok(Number(stats.sync_writes_committed) > 0, 'no commit on a node');
      }
    });
  }

  it('getAnyReplica and getAllReplicas read the replica copy', async () => {
    const key = 'cluster-replica-read';
    await collection.upsert(key, 'replicated', { durabilityLevel: DurabilityLevel.Majority });
    const any = await collection.getAnyReplica(key);
    assert.equal(any.content, 'replicated');
    const all = await collection.getAllReplicas(key);
    assert.equal(all.length, 2);
    assert.deepEqual(
      all.map((r) => r.isReplica).sort(),
      [false, true],
    );
    for (const r of all) assert.equal(r.content, 'replicated');
  });
});
