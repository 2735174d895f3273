// The metrics endpoint as a monitoring stack reads it: Debian's Prometheus
// scrapes syncwrite-server every second (basic auth as a configured user),
// the SDK drives a known workload — COMMITTED durable writes that a replica
// acknowledges after ACK_DELAY_MS, then TIMED_OUT ones against the same
// replica paused — and Prometheus's HTTP API must give exactly those counts,
// and a median commit latency inside the range the ack delay forces.
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const {
  couchbase,
  Server,
  openDefault,
  configWith,
  waitFor,
  USER,
  PASSWORD,
} = require('./support');

const PROMETHEUS = process.env.SYNCWRITE_PROMETHEUS || 'prometheus';
const COMMITTED = 40;
const TIMED_OUT = 7;
const ACK_DELAY_MS = 20;
const DURABLE_TIMEOUT_MS = 1500; // the SDK sends 0.9 × this in the frame

// A port free now (Prometheus cannot be told to pick one and report it).
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startPrometheus(dir, target) {
  const webPort = await freePort();
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(
    configFile,
    [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: syncwrite',
      '    basic_auth:',
      `      username: ${USER}`,
      `      password: ${PASSWORD}`,
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(dir, 'prometheus.log'), 'w');
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${webPort}`,
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  let failed = null; // e.g. ENOENT: ./dev installs Debian's prometheus
  child.on('error', (err) => {
    failed = err;
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${webPort}`;
  await waitFor('Prometheus to be ready', async () => {
    if (failed) throw new Error(`cannot run ${PROMETHEUS}: ${failed.message}`);
    return (await fetch(`${url}/-/ready`)).ok;
  });
  return { child, url, exited, log: () => fs.readFileSync(path.join(dir, 'prometheus.log'), 'utf8') };
}

async function query(url, expr) {
  const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = await response.json();
  assert.equal(body.status, 'success', JSON.stringify(body));
  return body.data.result;
}

// The value of a query that yields one series, or NaN when it yields none.
async function scalar(url, expr) {
  const result = await query(url, expr);
  return result.length === 1 ? Number(result[0].value[1]) : NaN;
}

describe('metrics scraped by a real Prometheus', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncwrite-metrics-'));
  let server;
  let prometheus;
  let cluster;
  let collection;

  before(async () => {
    const config = configWith(
      {
        replicas: ['replica1'],
        simulated_replicas: { replica1: { ack_delay_ms: ACK_DELAY_MS } },
      },
      { prometheus_port: 0 },
    );
    const portFile = path.join(dir, 'port');
    server = await Server.start(config, [], portFile);
    const metricsPort = Number(fs.readFileSync(`${portFile}.prometheus`, 'utf8'));
    assert.ok(metricsPort > 0);
    // Without the user's password the endpoint tells nothing.
    const anonymous = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(anonymous.status, 401);
    const wrong = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
      headers: { Authorization: `Basic ${Buffer.from(`${USER}:wrong`).toString('base64')}` },
    });
    assert.equal(wrong.status, 401);
    prometheus = await startPrometheus(dir, `127.0.0.1:${metricsPort}`);
    ({ collection, cluster } = await openDefault(server));
  });

  after(async () => {
    await cluster?.close();
    if (prometheus) {
      prometheus.child.kill('SIGTERM');
      await prometheus.exited;
    }
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts every SyncWrite and its outcome, and its commit latency', async () => {
    const durabilityLevel = couchbase.DurabilityLevel.Majority;
    const commits = [];
    for (let i = 0; i < COMMITTED; i++) {
      commits.push(collection.upsert(`committed-${i}`, { i }, { durabilityLevel }));
    }
    await Promise.all(commits);

    const paused = await server.cli('set-param', 'simulated_replicas_paused', 'replica1');
    assert.equal(paused.code, 0, `set-param failed: ${paused.stderr}`);
    const timeouts = [];
    for (let i = 0; i < TIMED_OUT; i++) {
      timeouts.push(
        collection
          .upsert(`timed-out-${i}`, { i }, { durabilityLevel, timeout: DURABLE_TIMEOUT_MS })
          .then(
            () => 'committed',
            (err) => (err instanceof couchbase.DurabilityAmbiguousError ? 'ambiguous' : String(err)),
          ),
      );
    }
    assert.deepEqual(await Promise.all(timeouts), new Array(TIMED_OUT).fill('ambiguous'));

    const url = prometheus.url;
    const sel = '{job="syncwrite",bucket="default",level="majority"}';
    // Scrapes are a second apart: wait until one has seen the last answer.
    await waitFor(
      'a scrape after the workload',
      async () =>
        (await scalar(url, 'sum(kv_sync_write_ambiguous_count{job="syncwrite",cause="timeout"})')) ===
        TIMED_OUT,
      15000,
    ).catch((err) => {
      throw new Error(`${err.message}\n${prometheus.log()}`);
    });
    assert.equal(await scalar(url, `kv_vb_active_sync_write_accepted_count${sel}`), COMMITTED + TIMED_OUT);
    assert.equal(await scalar(url, `kv_vb_active_sync_write_committed_count${sel}`), COMMITTED);
    assert.equal(await scalar(url, `kv_vb_active_sync_write_aborted_count${sel}`), TIMED_OUT);
    assert.equal(await scalar(url, `kv_sync_write_commit_duration_seconds_count${sel}`), COMMITTED);
    assert.equal(await scalar(url, 'kv_sync_writes_pending{job="syncwrite"}'), 0);
    // Every commit waited for the replica's ack, ACK_DELAY_MS after its
    // prepare; none took a second. The median lies in a bucket above 10 ms.
    const median = await scalar(
      url,
      `histogram_quantile(0.5, kv_sync_write_commit_duration_seconds_bucket${sel})`,
    );
    assert.ok(median > 0.01 && median <= 0.05, `median commit latency ${median} s`);
    const underDelay = await scalar(
      url,
      `kv_sync_write_commit_duration_seconds_bucket{job="syncwrite",level="majority",le="0.01"}`,
    );
    assert.equal(underDelay, 0);
    // The timeouts were answered by the event-driven task, late by little.
    const lateness = await scalar(
      url,
      'kv_durability_timeout_lateness_seconds_count{job="syncwrite",mode="event-driven"}',
    );
    assert.equal(lateness, TIMED_OUT);
    assert.ok((await scalar(url, 'kv_curr_connections{job="syncwrite"}')) >= 1);
    // The paused replica holds nothing back once those writes were aborted.
    assert.equal(await scalar(url, 'kv_replica_sync_writes_unacked{replica="replica1"}'), 0);
    assert.equal(
      await scalar(url, 'kv_mcbp_ops{job="syncwrite",opcode="SET",status="SyncWriteAmbiguous"}'),
      TIMED_OUT,
    );
  });
});
