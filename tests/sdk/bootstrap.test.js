// Bootstrap: the SDK connects (SASL, error map, cluster map), opens a bucket,
// and reports a wrong password and a missing bucket with its own errors.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { couchbase, Server, connect, openDefault, waitFor, FAST_REPLICA } = require('./support');

// Connects with `options`, opens "default", writes and reads one document.
async function roundTrip(server, options, key) {
  const { cluster, collection } = await openDefault(server, options);
  try {
    const stored = await collection.upsert(key, { via: options?.query || 'default' });
    const read = await collection.get(key);
    assert.deepEqual(read.content, { via: options?.query || 'default' });
    assert.equal(read.cas.toString(), stored.cas.toString());
  } finally {
    await cluster.close();
  }
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
    await roundTrip(server, {}, 'bootstrap-default');
  });

  it('connects with ?allowed_sasl_mechanisms=PLAIN', async () => {
    await roundTrip(server, { query: 'allowed_sasl_mechanisms=PLAIN' }, 'bootstrap-plain');
  });

  it('connects with ?allowed_sasl_mechanisms=SCRAM-SHA256', async () => {
    await roundTrip(server, { query: 'allowed_sasl_mechanisms=SCRAM-SHA256' }, 'bootstrap-256');
  });

  it('connects with ?allowed_sasl_mechanisms=SCRAM-SHA1', async () => {
    await roundTrip(server, { query: 'allowed_sasl_mechanisms=SCRAM-SHA1' }, 'bootstrap-sha1');
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

  it('reports a missing bucket as BucketNotFoundError', async () => {
    const cluster = await connect(server);
    try {
      const collection = cluster.bucket('no-such-bucket').defaultCollection();
      // An operation queued while the SDK opens the bucket waits for that
      // bucket's config, and the SDK does not fail it when the open fails
      // (it logs "failed to open bucket" and the operation times out): an SDK
      // behaviour, whatever the server answers. So this first one may time
      // out; it is also what gives the open time to fail.
      await assert.rejects(collection.get('k', { timeout: 1000 }), (err) => {
        return (
          err instanceof couchbase.BucketNotFoundError ||
          err instanceof couchbase.UnambiguousTimeoutError
        );
      });
      // Every later operation opens the bucket again, and SELECT_BUCKET's
      // answer (0x24) fails it at once. (0x01 would make the SDK retry the
      // bootstrap until its timeout: this one would time out too.)
      await assert.rejects(collection.get('k', { timeout: 1000 }), couchbase.BucketNotFoundError);
      await assert.rejects(
        collection.upsert('k', 1, { timeout: 1000 }),
        couchbase.BucketNotFoundError,
      );
    } finally {
      await cluster.close();
    }
  });
});

describe('bootstrap against a config file with users', () => {
  let server;
  before(async () => {
    server = await Server.start(FAST_REPLICA);
  });
  after(async () => {
    await server?.stop();
  });

  it('connects and runs KV', async () => {
    await roundTrip(server, {}, 'bootstrap-config-file');
  });
});
