// The Couchbase Node SDK against a cluster of three syncwrite-server
// processes (one replica per vbucket, fed over DCP, as ./dev run --nodes 3):
// it reads the cluster map with every node, routes each key to its active
// node, durable writes at each level commit once the replica process holds
// them, getAnyReplica / getAllReplicas read the replica's copy, and after a
// node is killed and `syncwrite-cli failover` runs, the same collection keeps
// working on the new map.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { couchbase, Server, openDefault, USERS, USER, vbucketOf, waitFor } = require('./support');

const { DurabilityLevel } = couchbase;

const NAMES = ['n1', 'n2', 'n3'];
const NUM_VBUCKETS = 1024;

describe('a cluster of three processes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncwrite-sdk-cluster-'));
  const portFile = (name) => path.join(dir, `${name}.port`);
  const config = {
    users: USERS,
    cluster: {
      replication_user: USER,
      nodes: {
        n1: { host: '127.0.0.1', port_file: portFile('n1') },
        n2: { host: '127.0.0.1', port_file: portFile('n2') },
        n3: { host: '127.0.0.1', port_file: portFile('n3') },
      },
    },
    buckets: { default: { num_replicas: 1, bucket_type: 'couchbase' } },
  };
  const nodes = [];
  let cluster;
  let collection;

  // Vbucket v's chain is [NAMES[v % 3], NAMES[(v + 1) % 3]].
  const activeOf = (key) => NAMES[vbucketOf(key) % 3];
  const replicaOf = (key) => NAMES[(vbucketOf(key) + 1) % 3];
  const clusterFile = path.join(dir, 'cluster.json');

  before(async () => {
    fs.writeFileSync(clusterFile, JSON.stringify(config));
    for (const name of NAMES) {
      nodes.push(await Server.start(config, ['--node', name], portFile(name)));
    }
    // Each node streams the vbuckets it is the replica of from their actives.
    for (const [i, node] of nodes.entries()) {
      let replicas = 0;
      for (let vb = 0; vb < NUM_VBUCKETS; vb++) replicas += (vb + 1) % 3 === i ? 1 : 0;
      await waitFor('replication streams', async () => {
        const stats = await node.stats();
        return stats.replication_streams === String(replicas);
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
    it(`${name}: durable writes to keys of every node commit and read back`, async () => {
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
    assert.equal(all.length, 2); // the active and its one replica
    assert.deepEqual(
      all.map((r) => r.isReplica).sort(),
      [false, true],
    );
    for (const r of all) assert.equal(r.content, 'replicated');
  });

  it('after a node is killed and failed over, the same collection keeps working', async () => {
    const keys = Array.from({ length: 60 }, (_, i) => `failover-${i}`);
    await Promise.all(
      keys.map((key) =>
        collection.upsert(key, { key }, { durabilityLevel: DurabilityLevel.Majority }),
      ),
    );
    const [victim] = nodes.splice(1, 1); // n2
    victim.signal('SIGKILL');
    await victim.waitExit();
    const failover = await nodes[0].cli('failover', 'n2', '--cluster', clusterFile);
    assert.equal(failover.code, 0, failover.stderr);
    assert.match(failover.stdout, /failed over node 'n2'/);
    // Every key acknowledged before reads back once the SDK has the new map
    // (it polls the cluster map; a key n2 was active for is read from the
    // replica promoted in its place).
    for (const key of keys) {
      await waitFor(`read ${key} after the failover`, async () => {
        try {
          return (await collection.get(key)).content.key === key;
        } catch {
          return false;
        }
      });
    }
    // Plain writes go to every vbucket's new active.
    await Promise.all(keys.map((key) => collection.upsert(key, { key, after: true })));
    for (const key of keys) assert.deepEqual((await collection.get(key)).content, { key, after: true });
    // A chain that still has its replica takes durable writes; one that lost
    // it ([new active, null]) answers DurabilityImpossible, as Couchbase
    // does until a rebalance.
    const whole = keys.find((key) => activeOf(key) !== 'n2' && replicaOf(key) !== 'n2');
    const halved = keys.find((key) => activeOf(key) === 'n2');
    await collection.upsert(whole, 'durable', { durabilityLevel: DurabilityLevel.Majority });
    await assert.rejects(
      collection.upsert(halved, 'durable', { durabilityLevel: DurabilityLevel.Majority }),
      couchbase.DurabilityImpossibleError,
    );
  });
});
