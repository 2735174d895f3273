// Test support for the SDK suite: runs the real syncwrite-server binary on an
// ephemeral port (one config per scenario), connects the official Couchbase
// Node SDK to it, and talks raw MCBP where a test plays a part the SDK cannot
// (an external replica acknowledging over DCP, reading stats).
//
// Waiting is for events, never for time: a server is ready when it has written
// its --port file; a test waits for a stat to reach a value. Every wait has a
// hang guard so that a missing feature fails the test instead of hanging it.
'use strict';

const assert = require('node:assert/strict');
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');

const couchbase = require('couchbase');

const REPO = path.resolve(__dirname, '..', '..');
const SERVER_BINARY =
  process.env.SYNCWRITE_SERVER || path.join(REPO, 'build', 'release', 'bin', 'syncwrite-server');
const CLI_BINARY =
  process.env.SYNCWRITE_CLI || path.join(REPO, 'build', 'release', 'bin', 'syncwrite-cli');

// The embedded default config's one user; every config below has it too, so
// syncwrite-cli's default credentials work against every server here.
const USER = 'Administrator';
const PASSWORD = 'password';
const USERS = { [USER]: { password: PASSWORD } };

const HANG_GUARD_MS = 10000;
const NUM_VBUCKETS = 1024;

// The SDK's timeouts: small, so that a hang fails fast.
const TIMEOUTS = {
  connectTimeout: 5000,
  bootstrapTimeout: 5000,
  kvTimeout: 5000,
  kvDurableTimeout: 5000,
  managementTimeout: 5000,
};

// What the SDK puts in the durability frame for an operation `timeout` (ms):
// 0.9 × the timeout, the timeout first raised to 1500 (couchbase-cxx-client
// core/io/mcbp_command.hxx).
function frameTimeoutMs(operationTimeoutMs) {
  return Math.floor(0.9 * Math.max(operationTimeoutMs, 1500));
}

// The vbucket of a key as Couchbase clients compute it (zlib's CRC-32).
function vbucketOf(key, numVbuckets = NUM_VBUCKETS) {
  return ((zlib.crc32(key) >>> 16) & 0x7fff) % numVbuckets;
}

// `count` keys starting with `prefix`, each in its own vbucket and none in
// the vbuckets of `avoid` (keys).
function keysInDistinctVbuckets(prefix, count, avoid = []) {
  const used = new Set(avoid.map((k) => vbucketOf(k)));
  const keys = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `${prefix}-${i}`;
    const vb = vbucketOf(key);
    if (used.has(vb)) continue;
    used.add(vb);
    keys.push(key);
  }
  return keys;
}

// A server config: the default user, and one bucket "default" with `bucket`
// as its keys (e.g. {replicas: ["replica1"]} for a silent replica).
function configWith(bucket, top = {}) {
  return { users: USERS, ...top, buckets: { default: bucket } };
}

// `config` with every bucket a couchbase (persistent) one: the persist
// levels need a disk (an ephemeral bucket refuses them, as kv_engine's).
function persistent(config) {
  const buckets = {};
  for (const [name, bucket] of Object.entries(config.buckets)) {
    buckets[name] = { ...bucket, bucket_type: 'couchbase' };
  }
  return { ...config, buckets };
}

const SILENT_REPLICA = configWith({ replicas: ['replica1'] });
const FAST_REPLICA = configWith({
  replicas: ['replica1'],
  simulated_replicas: { replica1: { ack_delay_ms: 1 } },
});

const running = new Set();
const tempDirs = new Set();
process.on('exit', () => {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Polls `predicate` (sync or async) every few ms until it returns truthy;
// throws naming `what` after `timeoutMs`.
async function waitFor(what, predicate, timeoutMs = HANG_GUARD_MS) {
  const giveUp = Date.now() + timeoutMs;
  let last;
  while (Date.now() < giveUp) {
    try {
      last = await predicate();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(5);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last})`);
}

class Server {
  // Starts syncwrite-server with `config` (an object written to a file, or
  // null for the embedded default) and resolves once it listens.
  // `portFile`: where the server writes its port (default: in its own
  // directory); a cluster's nodes name each other's in the shared config.
  static async start(config = FAST_REPLICA, extraArgs = [], portFile = null) {
    const server = new Server();
    await server.#spawn(config, extraArgs, portFile);
    return server;
  }

  #dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncwrite-sdk-'));
  #child = null;
  #exit = null; // a promise of {code, signal}
  #exited = null;
  #stderrAtExit = null; // kept once stop() has removed the directory
  port = 0;
  // A config with no users needs no authentication (the embedded one has a user).
  needsAuth = true;

  async #spawn(config, extraArgs, givenPortFile) {
    tempDirs.add(this.#dir);
    const args = [];
    this.needsAuth = config === null || Object.keys(config.users ?? {}).length > 0;
    if (config !== null) {
      const file = path.join(this.#dir, 'config.json');
      // A couchbase bucket keeps its data in this server's own directory
      // unless the config names one.
      const onDisk = Object.values(config.buckets ?? {}).some((b) => b.bucket_type === 'couchbase');
      const written = onDisk && !config.data_dir ? { ...config, data_dir: path.join(this.#dir, 'data') } : config;
      fs.writeFileSync(file, JSON.stringify(written, null, 1));
      args.push('--config', file);
    }
    const portFile = givenPortFile ?? path.join(this.#dir, 'port');
    args.push('--host', '127.0.0.1', '--port', '0', '--port-file', portFile, ...extraArgs);
    const stderr = fs.openSync(path.join(this.#dir, 'stderr.txt'), 'w');
    this.#child = spawn(SERVER_BINARY, args, { stdio: ['ignore', stderr, stderr] });
    fs.closeSync(stderr);
    running.add(this.#child);
    this.#exit = new Promise((resolve) => {
      this.#child.on('exit', (code, signal) => {
        running.delete(this.#child);
        this.#exited = { code, signal };
        resolve(this.#exited);
      });
      this.#child.on('error', (err) => {
        running.delete(this.#child);
        this.#exited = { code: null, signal: null, error: err };
        resolve(this.#exited);
      });
    });
    const giveUp = Date.now() + HANG_GUARD_MS;
    while (Date.now() < giveUp) {
      let text = '';
      try {
        text = fs.readFileSync(portFile, 'utf8');
      } catch {
        // not written yet
      }
      if (/^\d+\s*$/.test(text)) {
        this.port = Number(text);
        return;
      }
      if (this.#exited) {
        throw new Error(
          `syncwrite-server exited (${JSON.stringify(this.#exited)}) before listening: ` +
            this.stderr(),
        );
      }
      await sleep(5);
    }
    this.#child.kill('SIGKILL');
    throw new Error(`syncwrite-server did not write its port file: ${this.stderr()}`);
  }

  get connStr() {
    return `couchbase://127.0.0.1:${this.port}`;
  }

  stderr() {
    if (this.#stderrAtExit !== null) return this.#stderrAtExit;
    try {
      return fs.readFileSync(path.join(this.#dir, 'stderr.txt'), 'utf8');
    } catch {
      return '';
    }
  }

  signal(sig) {
    if (!this.#exited) this.#child.kill(sig);
  }

  // Resolves {code, signal} once the process has exited; SIGKILLs it and
  // rejects after `timeoutMs`.
  async waitExit(timeoutMs = HANG_GUARD_MS) {
    let timer;
    const guard = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.#child.kill('SIGKILL');
        reject(new Error(`syncwrite-server did not exit: ${this.stderr()}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.#exit, guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  // SIGTERM and wait; the server must exit 0.
  async stop() {
    if (!this.#child) return;
    this.signal('SIGTERM');
    let status;
    try {
      status = await this.waitExit();
    } finally {
      this.#stderrAtExit = this.stderr();
      fs.rmSync(this.#dir, { recursive: true, force: true });
      tempDirs.delete(this.#dir);
    }
    assert.deepEqual(
      { code: status.code, signal: status.signal },
      { code: 0, signal: null },
      `syncwrite-server exit: ${this.#stderrAtExit}`,
    );
  }

  // Runs syncwrite-cli against this server; resolves {code, stdout, stderr}.
  cli(...args) {
    return new Promise((resolve) => {
      execFile(
        CLI_BINARY,
        ['--port', String(this.port), ...args],
        { timeout: HANG_GUARD_MS },
        (err, stdout, stderr) => {
          resolve({ code: err ? (err.code ?? -1) : 0, stdout, stderr });
        },
      );
    });
  }

  // A raw MCBP connection, authenticated (PLAIN) with `bucket` selected.
  async mcbp({ bucket = 'default', user = USER, password = PASSWORD } = {}) {
    const client = await McbpClient.connect(this.port);
    try {
      if (this.needsAuth) await client.authenticate(user, password);
      if (bucket) await client.selectBucket(bucket);
    } catch (err) {
      client.close();
      throw err;
    }
    return client;
  }

  // The stats of `group` ("" general, "durability", ...) as {name: text}.
  async stats(group = '') {
    const client = await this.mcbp();
    try {
      return await client.stats(group);
    } finally {
      client.close();
    }
  }
}

// Connects the SDK to `server`. `query` is appended to the connection string
// (e.g. "allowed_sasl_mechanisms=PLAIN").
// `server` is a Server or anything with a connStr (a recordingProxy).
function connect(server, { username = USER, password = PASSWORD, query = '', timeouts = {} } = {}) {
  const connStr = server.connStr + (query ? `?${query}` : '');
  return couchbase.connect(connStr, {
    username,
    password,
    timeouts: { ...TIMEOUTS, ...timeouts },
  });
}

// Connects and opens bucket "default"; resolves {cluster, bucket, collection}
// once a first operation has gone through the bucket's connection, so that
// later timings do not include the bucket's bootstrap.
async function openDefault(server, options) {
  const cluster = await connect(server, options);
  try {
    const bucket = cluster.bucket('default');
    const collection = bucket.defaultCollection();
    await assert.rejects(collection.get('warm-up-missing-key'), couchbase.DocumentNotFoundError);
    return { cluster, bucket, collection };
  } catch (err) {
    await cluster.close();
    throw err;
  }
}

// ---------------------------------------------------------------------------
// A minimal MCBP client (the tests' own, for what the SDK does not do).

const MAGIC_REQ = 0x80;
const MAGIC_RES = 0x81;
const OP = {
  STAT: 0x10,
  SASL_AUTH: 0x21,
  DCP_OPEN: 0x50,
  DCP_SEQNO_ACKNOWLEDGED: 0x61,
  SELECT_BUCKET: 0x89,
};

class McbpClient {
  #socket;
  #buffer = Buffer.alloc(0);
  #nextOpaque = 1;
  #waiting = new Map(); // opaque -> {responses, resolve, reject, multi}
  strays = []; // responses nobody waited for (failed seqno acks)
  #closedError = null;

  static connect(port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new McbpClient(socket));
      });
    });
  }

  constructor(socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.#onData(chunk));
    const fail = (err) => {
      this.#closedError = err || new Error('connection closed');
      for (const w of this.#waiting.values()) w.reject(this.#closedError);
      this.#waiting.clear();
    };
    socket.on('error', fail);
    socket.on('close', () => fail(null));
  }

  close() {
    this.#socket.destroy();
  }

  #onData(chunk) {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 24) {
      const bodyLength = this.#buffer.readUInt32BE(8);
      if (this.#buffer.length < 24 + bodyLength) return;
      const packet = this.#buffer.subarray(0, 24 + bodyLength);
      this.#buffer = this.#buffer.subarray(24 + bodyLength);
      const keyLength = packet.readUInt16BE(2);
      const extrasLength = packet[4];
      const response = {
        magic: packet[0],
        opcode: packet[1],
        status: packet.readUInt16BE(6),
        opaque: packet.readUInt32BE(12),
        cas: packet.readBigUInt64BE(16),
        extras: packet.subarray(24, 24 + extrasLength),
        key: packet.subarray(24 + extrasLength, 24 + extrasLength + keyLength).toString(),
        value: packet.subarray(24 + extrasLength + keyLength),
      };
      const waiter = this.#waiting.get(response.opaque);
      if (!waiter || response.magic !== MAGIC_RES) {
        this.strays.push(response);
        continue;
      }
      waiter.responses.push(response);
      // A multi-response (STAT) ends with an empty key or an error.
      if (!waiter.multi || response.status !== 0 || response.key.length === 0) {
        this.#waiting.delete(response.opaque);
        waiter.resolve(waiter.multi ? waiter.responses : response);
      }
    }
  }

  #encode(opcode, { key = '', extras = Buffer.alloc(0), value = Buffer.alloc(0), vbucket = 0 }) {
    const keyBuf = Buffer.from(key);
    const header = Buffer.alloc(24);
    header[0] = MAGIC_REQ;
    header[1] = opcode;
    header.writeUInt16BE(keyBuf.length, 2);
    header[4] = extras.length;
    header.writeUInt16BE(vbucket, 6);
    header.writeUInt32BE(extras.length + keyBuf.length + value.length, 8);
    const opaque = this.#nextOpaque++;
    header.writeUInt32BE(opaque, 12);
    return { opaque, packet: Buffer.concat([header, extras, keyBuf, value]) };
  }

  // Sends and resolves with the response (or the list of responses when
  // `multi`), with a hang guard.
  request(opcode, fields = {}, multi = false) {
    if (this.#closedError) return Promise.reject(this.#closedError);
    const { opaque, packet } = this.#encode(opcode, fields);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(opaque);
        reject(new Error(`no answer to opcode 0x${opcode.toString(16)}`));
      }, HANG_GUARD_MS);
      const done = (fn) => (x) => {
        clearTimeout(timer);
        fn(x);
      };
      this.#waiting.set(opaque, {
        responses: [],
        multi,
        resolve: done(resolve),
        reject: done(reject),
      });
      this.#socket.write(packet);
    });
  }

  // Sends without waiting (DCP_SEQNO_ACKNOWLEDGED answers only failures).
  send(opcode, fields = {}) {
    this.#socket.write(this.#encode(opcode, fields).packet);
  }

  static #check(response, what) {
    if (response.status !== 0) {
      throw new Error(
        `${what}: status 0x${response.status.toString(16)} ${response.value.toString()}`,
      );
    }
    return response;
  }

  async authenticate(user, password) {
    const value = Buffer.from(`\0${user}\0${password}`);
    McbpClient.#check(await this.request(OP.SASL_AUTH, { key: 'PLAIN', value }), 'SASL_AUTH PLAIN');
  }

  async selectBucket(bucket) {
    McbpClient.#check(await this.request(OP.SELECT_BUCKET, { key: bucket }), 'SELECT_BUCKET');
  }

  async stats(group = '') {
    const responses = await this.request(OP.STAT, { key: group }, true);
    const out = {};
    for (const r of responses) {
      McbpClient.#check(r, `STAT ${group}`);
      if (r.key) out[r.key] = r.value.toString();
    }
    return out;
  }

  // Opens a DCP producer connection as replica `node`: after it, seqnoAck()
  // acknowledges prepares for that node.
  async dcpOpen(node) {
    const extras = Buffer.alloc(8);
    extras.writeUInt32BE(0, 0); // seqno (reserved)
    extras.writeUInt32BE(1, 4); // flags: producer
    McbpClient.#check(await this.request(OP.DCP_OPEN, { key: node, extras }), 'DCP_OPEN');
  }

  // The replica holds every prepare of `vbucket` up to `preparedSeqno`.
  seqnoAck(vbucket, preparedSeqno) {
    const extras = Buffer.alloc(8);
    extras.writeBigUInt64BE(BigInt(preparedSeqno));
    this.send(OP.DCP_SEQNO_ACKNOWLEDGED, { extras, vbucket });
  }
}

// A TCP proxy in front of `server` that records the MCBP packets crossing it
// in both directions: {from: 'client'|'server', magic, opcode, key, status,
// value}. The SDK's first (cluster-level) connection goes through it when the
// SDK is given its port; what that connection negotiates is what every
// connection of the SDK negotiates.
async function recordingProxy(server) {
  const packets = [];
  const sockets = new Set();
  const parse = (from) => {
    let buffer = Buffer.alloc(0);
    return (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 24) {
        const bodyLength = buffer.readUInt32BE(8);
        if (buffer.length < 24 + bodyLength) return;
        const p = buffer.subarray(0, 24 + bodyLength);
        buffer = buffer.subarray(24 + bodyLength);
        const alt = p[0] === 0x08 || p[0] === 0x18;
        const framing = alt ? p[2] : 0;
        const keyLength = alt ? p[3] : p.readUInt16BE(2);
        const body = 24 + framing + p[4];
        packets.push({
          from,
          magic: p[0],
          opcode: p[1],
          status: from === 'server' ? p.readUInt16BE(6) : undefined,
          key: p.subarray(body, body + keyLength).toString('latin1'),
          value: Buffer.from(p.subarray(body + keyLength)),
        });
      }
    };
  };
  const proxy = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: server.port });
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', parse('client'));
    upstream.on('data', parse('server'));
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: proxy.address().port,
    get connStr() {
      return `couchbase://127.0.0.1:${proxy.address().port}`;
    },
    packets,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => proxy.close(resolve));
    },
  };
}

// Calls `start()` (which returns a promise) and records how it settles:
// resolves {ok, value|error, elapsedMs, label}, elapsedMs measured on the
// monotonic clock from before the call; pushes `label` onto `log` when it
// settles, so `log` is the order of settlements.
function track(start, log, label) {
  const t0 = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - t0) / 1e6;
  return start().then(
    (value) => {
      log.push(label);
      return { ok: true, value, elapsedMs: elapsed(), label };
    },
    (error) => {
      log.push(label);
      return { ok: false, error, elapsedMs: elapsed(), label };
    },
  );
}

// Waits until the bucket's stat `name` in group `durability` equals `value`.
async function waitForDurabilityStat(server, name, value) {
  await waitFor(`durability stat ${name} == ${value}`, async () => {
    const stats = await server.stats('durability');
    return Number(stats[name]) === value;
  });
}

module.exports = {
  couchbase,
  SERVER_BINARY,
  CLI_BINARY,
  USER,
  PASSWORD,
  USERS,
  SILENT_REPLICA,
  FAST_REPLICA,
  configWith,
  persistent,
  frameTimeoutMs,
  vbucketOf,
  keysInDistinctVbuckets,
  waitFor,
  waitForDurabilityStat,
  sleep,
  track,
  Server,
  McbpClient,
  recordingProxy,
  connect,
  openDefault,
};
