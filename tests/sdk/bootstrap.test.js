// Bootstrap: the SDK connects (SASL, error map, cluster map), opens a bucket,
// reports a wrong password with its own error, and retries a missing bucket
// until its timeout, as it does against kv_engine.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');

const {
  couchbase,
  Server,
  connect,
  openDefault,
  recordingProxy,
  waitFor,
  configWith,
  FAST_REPLICA,
  USERS,
} = require('./support');

const SASL_AUTH = 0x21;
const SASL_STEP = 0x22;
const HELLO = 0x1f;

// Connects with `options` through a recording proxy, opens "default", writes
// and reads one document; returns what the SDK's first connection sent and
// received.
async function roundTrip(server, options, key) {
  const proxy = await recordingProxy(server);
  try {
    const { cluster, collection } = await openDefault(proxy, options);
    try {
      const stored = await collection.upsert(key, { via: options?.query || 'default' });
      const read = await collection.get(key);
      assert.deepEqual(read.content, { via: options?.query || 'default' });
      assert.equal(read.cas.toString(), stored.cas.toString());
    } finally {
      await cluster.close();
    }
    return [...proxy.packets];
  } finally {
    await proxy.close();
  }
}

// The SASL exchange in `packets`: the mechanism the SDK chose and the
// statuses the server answered, in order.
function saslExchange(packets) {
  const auth = packets.find((p) => p.from === 'client' && p.opcode === SASL_AUTH);
  const answers = packets
    .filter((p) => p.from === 'server' && (p.opcode === SASL_AUTH || p.opcode === SASL_STEP))
    .map((p) => p.status);
  return { mechanism: auth?.key, answers };
}

// Checks the server's SCRAM proof (RFC 5802): the SDK ignores the
// server-final message, but other clients verify it, so it must be right.
function checkServerSignature(packets, hash, password) {
  const value = (from, opcode) =>
    packets.find((p) => p.from === from && p.opcode === opcode).value.toString('latin1');
  const clientFirstBare = value('client', SASL_AUTH).replace(/^n,,/, '');
  const serverFirst = value('server', SASL_AUTH);
  const clientFinal = value('client', SASL_STEP);
  const serverFinal = value('server', SASL_STEP);
  const attrs = Object.fromEntries(
    serverFirst.split(',').map((kv) => [kv[0], kv.slice(2)]),
  );
  const clientNonce = /(?:^|,)r=([^,]*)/.exec(clientFirstBare)[1];
  assert.ok(attrs.r.startsWith(clientNonce), 'the server nonce extends the client nonce');
  const keyLength = { sha512: 64, sha256: 32, sha1: 20 }[hash];
  const salted = crypto.pbkdf2Sync(
    password,
    Buffer.from(attrs.s, 'base64'),
    Number(attrs.i),
    keyLength,
    hash,
  );
  const withoutProof = clientFinal.replace(/,p=[^,]*$/, '');
  const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
  const serverKey = crypto.createHmac(hash, salted).update('Server Key').digest();
  const signature = crypto.createHmac(hash, serverKey).update(authMessage).digest('base64');
  assert.equal(serverFinal, `v=${signature}`);
}

// The HELLO features the server agreed to.
function agreedFeatures(packets) {
  const hello = packets.find((p) => p.from === 'server' && p.opcode === HELLO);
  const features = [];
  for (let i = 0; i + 1 < hello.value.length; i += 2) features.push(hello.value.readUInt16BE(i));
  return features;
}

describe('bootstrap against the embedded default config', () => {
  let server;
  before(async () => {
    server = await Server.start(null);
  });
  after(async () => {
    await server?.stop();
  });

  it('connects with default options (SCRAM-SHA512) and runs KV', async () => {
    const packets = await roundTrip(server, {}, 'bootstrap-default');
    // SASL_AUTH answered AuthContinue, SASL_STEP Success.
    assert.deepEqual(saslExchange(packets), { mechanism: 'SCRAM-SHA512', answers: [0x21, 0x00] });
    checkServerSignature(packets, 'sha512', 'password');
    const features = agreedFeatures(packets);
    for (const [code, name] of [
      [0x0e, 'UnorderedExecution'],
      [0x04, 'MutationSeqno'],
      [0x07, 'XERROR'],
      [0x11, 'SyncReplication'],
      [0x06, 'XATTR'],
    ]) {
      assert.ok(features.includes(code), `HELLO agrees to ${name}: ${features}`);
    }
    for (const [code, name] of [
      [0x0a, 'Snappy'],
      [0x12, 'Collections'],
    ]) {
      assert.ok(!features.includes(code), `HELLO must not agree to ${name}: ${features}`);
    }
  });

  it('connects with ?allowed_sasl_mechanisms=PLAIN', async () => {
    const packets = await roundTrip(server, { query: 'allowed_sasl_mechanisms=PLAIN' }, 'bootstrap-plain');
    assert.deepEqual(saslExchange(packets), { mechanism: 'PLAIN', answers: [0x00] });
  });

  it('connects with ?allowed_sasl_mechanisms=SCRAM-SHA256', async () => {
    const packets = await roundTrip(
      server,
      { query: 'allowed_sasl_mechanisms=SCRAM-SHA256' },
      'bootstrap-256',
    );
    assert.deepEqual(saslExchange(packets), { mechanism: 'SCRAM-SHA256', answers: [0x21, 0x00] });
    checkServerSignature(packets, 'sha256', 'password');
  });

  it('connects with ?allowed_sasl_mechanisms=SCRAM-SHA1', async () => {
    const packets = await roundTrip(
      server,
      { query: 'allowed_sasl_mechanisms=SCRAM-SHA1' },
      'bootstrap-sha1',
    );
    assert.deepEqual(saslExchange(packets), { mechanism: 'SCRAM-SHA1', answers: [0x21, 0x00] });
    checkServerSignature(packets, 'sha1', 'password');
  });

  it('refuses a wrong password with AuthenticationFailureError (SCRAM)', async () => {
    await assert.rejects(
      connect(server, { password: 'not-the-password' }),
      couchbase.AuthenticationFailureError,
    );
  });

  it('refuses a wrong password with AuthenticationFailureError (PLAIN)', async () => {
    await assert.rejects(
      connect(server, { password: 'not-the-password', query: 'allowed_sasl_mechanisms=PLAIN' }),
      couchbase.AuthenticationFailureError,
    );
  });

  it('refuses an unknown user with AuthenticationFailureError, and logs user and peer', async () => {
    await assert.rejects(
      connect(server, { username: 'nobody', password: 'password' }),
      couchbase.AuthenticationFailureError,
    );
    await waitFor('the failure in the server log', () =>
      /auth[^\n]*nobody[^\n]*127\.0\.0\.1/i.test(server.stderr()),
    );
  });

  it('keeps serving after a failed authentication', async () => {
    await assert.rejects(connect(server, { password: 'wrong' }), couchbase.AuthenticationFailureError);
    await roundTrip(server, {}, 'bootstrap-after-failure');
  });

  it('keeps retrying a missing bucket until the timeout, as against kv_engine', async () => {
    // SELECT_BUCKET of a bucket that does not exist answers 0x01 to a user
    // who may access every bucket, as kv_engine's select_bucket_executor does
    // (every user here may). couchbase-cxx-client (core/io/mcbp_session.cxx)
    // reads 0x01 as "configuration not propagated yet" and retries the
    // bootstrap, so the operation times out; only 0x24 (a user without
    // access to that name) fails at once with BucketNotFoundError.
    const cluster = await connect(server);
    try {
      const collection = cluster.bucket('no-such-bucket').defaultCollection();
      await assert.rejects(collection.get('k', { timeout: 1000 }), couchbase.UnambiguousTimeoutError);
      await assert.rejects(
        collection.upsert('k', 1, { timeout: 1000 }),
        couchbase.UnambiguousTimeoutError,
      );
    } finally {
      await cluster.close();
    }
    await roundTrip(server, {}, 'bootstrap-after-missing-bucket');
  });
});

describe('bootstrap against a config file with users', () => {
  let server;
  before(async () => {
    // "app" may access bucket "default" only (server/server_config.h).
    server = await Server.start(
      configWith(FAST_REPLICA.buckets.default, {
        users: { ...USERS, app: { password: 'app-password', buckets: ['default'] } },
      }),
    );
  });
  after(async () => {
    await server?.stop();
  });

  it('connects and runs KV', async () => {
    await roundTrip(server, {}, 'bootstrap-config-file');
  });

  it('fails a bucket the user may not access at once with BucketNotFoundError', async () => {
    // SELECT_BUCKET answers 0x24 to a user without access to the name, as
    // kv_engine does, and the SDK then fails the bucket's operations at once.
    const cluster = await connect(server, { username: 'app', password: 'app-password' });
    try {
      const collection = cluster.bucket('no-such-bucket').defaultCollection();
      // An operation queued while the SDK opens the bucket waits for that
      // bucket's config, and the SDK does not fail it when the open fails (it
      // logs "failed to open bucket" and the operation times out): an SDK
      // behaviour. So this first one may time out; it gives the open time to fail.
      await assert.rejects(collection.get('k', { timeout: 1000 }), (err) => {
        return (
          err instanceof couchbase.BucketNotFoundError ||
          err instanceof couchbase.UnambiguousTimeoutError
        );
      });
      await assert.rejects(collection.get('k', { timeout: 1000 }), couchbase.BucketNotFoundError);
      await assert.rejects(
        collection.upsert('k', 1, { timeout: 1000 }),
        couchbase.BucketNotFoundError,
      );
    } finally {
      await cluster.close();
    }
    await roundTrip(server, { username: 'app', password: 'app-password' }, 'bootstrap-app-user');
  });
});
