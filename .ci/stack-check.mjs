#!/usr/bin/env node
/**
 * Usage: node .ci/stack-check.mjs   (from .ci/containers.sh, once the compose stack is up)
 *
 * Drives the compose stack of docker-compose.yml + .ci/compose.ci.yml from the host, through its
 * published ports only, and exits 1 on the first thing that is not as it should be:
 *   1. Prometheus (127.0.0.1:9090) has every role's target up (api ×2, worker ×2, hub, RabbitMQ)
 *      and has loaded every alerting rule of deploy/prometheus/alerts.yml;
 *   2. a webhook registered on one api replica, a dossier job submitted to the other (their
 *      host ports in OPCO_CI_API_URLS): the job completes on a worker against the sandbox upstream (Prometheus shows the
 *      worker's upstream call), and its job.completed webhook reaches the receiver, signed;
 *   3. a trickle of submissions while `docker compose restart worker` runs: every accepted job
 *      completes and its webhook arrives.
 * The sandbox upstream (adapters/sandbox, which listens on 127.0.0.1 only) is relayed to, and the
 * receiver listens on, the stack network's gateway address (OPCO_CI_GATEWAY), on the ports the
 * override's OPCO_CI_SANDBOX_URL and OPCO_CI_RECEIVER_PORT say. OPCO_CI_COMPOSE is a command
 * running docker compose on the stack. Prints the figures as it goes, and a JSON summary last.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSandbox } from '../adapters/sandbox/dist/src/index.js';

const env = (name) => process.env[name] || fail(`${name} is not set`);
const GATEWAY = env('OPCO_CI_GATEWAY');
const RELAY_PORT = Number(new URL(env('OPCO_CI_SANDBOX_URL')).port);
const RECEIVER_PORT = Number(env('OPCO_CI_RECEIVER_PORT'));
const COMPOSE = env('OPCO_CI_COMPOSE');
const TRICKLE_MS = Number(process.env.OPCO_CI_TRICKLE_MS ?? 250);
const APIS = env('OPCO_CI_API_URLS').split(','); // the two api replicas
const PROMETHEUS = 'http://127.0.0.1:9090';
const KEY = 'opco-ci-tenant-key-0001';
const summary = {};
const started = Date.now();

function fail(message) {
  console.error(`stack-check: ${message}`);
  process.exit(1);
}
const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);

/** Calls fn every intervalMs until it returns a truthy value; fails with what() after timeoutMs. */
async function until(what, timeoutMs, fn, intervalMs = 500) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) fail(`${what()} after ${timeoutMs / 1000} s${last ? ` (${last.message})` : ''}`);
    await sleep(intervalMs);
  }
}

async function call(base, method, path, body, headers = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

const prometheus = async (path) => {
  const res = await fetch(PROMETHEUS + path, { signal: AbortSignal.timeout(10_000) });
  const body = await res.json();
  if (body.status !== 'success') throw new Error(`${path}: ${JSON.stringify(body)}`);
  return body.data;
};

function dossier() {
  return {
    cerfa: {
      numeroExterne: `CI-${randomUUID().slice(0, 8)}`,
      employeur: { siret: '12345678901234', denomination: 'Boulangerie Martin', nom: 'martin' },
      apprenti: { nom: 'dupont', prenom: 'léa', dateNaissance: '2005-03-14' },
      contrat: {
        dateDebutContrat: '2024-09-01',
        dateFinContrat: '2026-08-31',
        dureeTravailHebdoHeures: 35,
        dureeTravailHebdoMinutes: 0,
      },
      formation: {
        rncp: 'RNCP35316',
        intituleQualification: 'CAP Boulanger',
        dateDebutFormation: '2024-09-02',
        dateFinFormation: '2026-06-30',
      },
      organismeFormation: { siret: '98765432109876' },
    },
  };
}

async function submit(base) {
  const at = Date.now();
  const reply = await call(base, 'POST', '/sandbox/dossiers', dossier(), { 'idempotency-key': randomUUID() });
  if (reply.status !== 202) return { status: reply.status, text: reply.text, at };
  return { status: 202, jobId: reply.json.jobId, statusUrl: reply.json.statusUrl, at };
}

// --- the upstream relay and the webhook receiver, at the network's gateway ---

const sandbox = await startSandbox({ seed: 7 });
const relay = createTcpServer((socket) => {
  const upstream = connect(Number(new URL(sandbox.url).port), '127.0.0.1');
  socket.pipe(upstream).pipe(socket);
  const end = () => (socket.destroy(), upstream.destroy());
  socket.on('error', end);
  upstream.on('error', end);
});
await new Promise((resolve, reject) => relay.once('error', reject).listen(RELAY_PORT, GATEWAY, resolve));

const deliveries = []; // {at, event, jobId, deliveryId, signatureOk}
let webhookSecret;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = {};
    try {
      body = JSON.parse(raw);
    } catch {}
    const signatureOk =
      webhookSecret !== undefined &&
      createHmac('sha256', webhookSecret).update(raw).digest('hex') === req.headers['svc-signature'];
    deliveries.push({
      at: Date.now(),
      event: req.headers['svc-event'],
      jobId: body.data?.jobId,
      deliveryId: req.headers['svc-delivery-id'],
      signatureOk,
    });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
await new Promise((resolve, reject) => receiver.once('error', reject).listen(RECEIVER_PORT, GATEWAY, resolve));
log(
  `sandbox upstream relayed at http://${GATEWAY}:${RELAY_PORT}, webhook receiver at http://${GATEWAY}:${RECEIVER_PORT}`,
);

try {
  // --- 1. Prometheus ---
  const expected = { 'opco-proxy-api': 2, 'opco-proxy-worker': 2, 'opco-proxy-hub': 1, rabbitmq: 1 };
  let targets = [];
  const upCount = () =>
    Object.fromEntries(
      Object.keys(expected).map((job) => [
        job,
        targets.filter((t) => t.labels.job === job && t.health === 'up').length,
      ]),
    );
  await until(
    () =>
      `Prometheus targets up: ${JSON.stringify(upCount())}, expected ${JSON.stringify(expected)}; ${JSON.stringify(targets.filter((t) => t.health !== 'up').map((t) => [t.scrapeUrl, t.lastError]))}`,
    120_000,
    async () => {
      targets = (await prometheus('/api/v1/targets?state=active')).activeTargets;
      const up = upCount();
      return (
        Object.entries(expected).every(([job, count]) => up[job] === count) && targets.every((t) => t.health === 'up')
      );
    },
    2000,
  );
  log(`Prometheus: every target up: ${targets.map((t) => `${t.labels.job} ${t.labels.instance}`).join(', ')}`);
  const alertNames = [
    ...readFileSync(new URL('../deploy/prometheus/alerts.yml', import.meta.url), 'utf8').matchAll(
      /^\s*- alert: (\S+)/gm,
    ),
  ].map((m) => m[1]);
  const groups = (await prometheus('/api/v1/rules?type=alert')).groups;
  const loaded = groups.flatMap((g) =>
    g.rules.filter((r) => r.health === 'ok' || r.health === 'unknown').map((r) => r.name),
  );
  const missing = alertNames.filter((name) => !loaded.includes(name));
  if (alertNames.length === 0 || missing.length > 0)
    fail(`Prometheus has not loaded the alerting rules ${missing.join(', ')} (loaded: ${loaded.join(', ') || 'none'})`);
  const firing = groups.flatMap((g) => g.rules.filter((r) => r.state === 'firing').map((r) => r.name));
  log(
    `Prometheus: ${loaded.length} alerting rules loaded (${alertNames.length} in alerts.yml)${firing.length ? `, firing: ${firing.join(', ')}` : ', none firing'}`,
  );
  summary.prometheus = { targetsUp: targets.length, rules: loaded.length, firing };

  // --- 2. one job through the stack ---
  const hook = await call(APIS[0], 'POST', '/webhooks', {
    callbackUrl: `http://${GATEWAY}:${RECEIVER_PORT}/opco-events`,
    events: ['job.completed', 'job.failed'],
  });
  if (hook.status !== 201) fail(`POST /webhooks on ${APIS[0]} answered ${hook.status}: ${hook.text}`);
  webhookSecret = hook.json.secret;
  log(`webhook ${hook.json.id} registered on ${APIS[0]}`);
  const job = await submit(APIS[1]);
  if (job.status !== 202) fail(`POST /sandbox/dossiers on ${APIS[1]} answered ${job.status}: ${job.text}`);
  let record;
  await until(
    () => `job ${job.jobId} did not end: ${JSON.stringify(record)}`,
    60_000,
    async () => {
      record = (await call(APIS[0], 'GET', job.statusUrl)).json;
      return record?.status === 'completed' || record?.status === 'failed';
    },
    100,
  );
  const completedAt = Date.now();
  if (record.status !== 'completed') fail(`job ${job.jobId} ${record.status}: ${JSON.stringify(record.error)}`);
  const delivery = await until(
    () => `no webhook for job ${job.jobId}`,
    60_000,
    () => deliveries.find((d) => d.jobId === job.jobId),
    50,
  );
  if (delivery.event !== 'job.completed' || !delivery.signatureOk)
    fail(`webhook for job ${job.jobId}: ${JSON.stringify(delivery)}`);
  log(
    `job ${job.jobId}: submitted to ${APIS[1]}, completed (read on ${APIS[0]}) after ${completedAt - job.at} ms, webhook job.completed (signature checked) after ${delivery.at - job.at} ms`,
  );
  // The upstream call was a worker's: the api role runs no jobs (Prometheus scrapes every 15 s).
  const calls = await until(
    () => 'Prometheus shows no upstream call to the sandbox',
    60_000,
    async () => {
      const result = (
        await prometheus(
          `/api/v1/query?query=${encodeURIComponent('sum by (job, instance) (opco_proxy_upstream_calls_total{opco="sandbox"})')}`,
        )
      ).result;
      return result.some((r) => r.metric.job === 'opco-proxy-worker' && Number(r.value[1]) > 0) && result;
    },
    2000,
  );
  log(`upstream calls to the sandbox by process: ${calls.map((r) => `${r.metric.instance} ${r.value[1]}`).join(', ')}`);
  summary.job = {
    submitToCompletedMs: completedAt - job.at,
    submitToWebhookMs: delivery.at - job.at,
    upstreamCalls: Object.fromEntries(calls.map((r) => [r.metric.instance, Number(r.value[1])])),
  };

  // --- 3. a trickle of submissions across `docker compose restart worker` ---
  const submitted = [];
  let restart;
  const restartStarted = Date.now() + 2000;
  const trickle = (async () => {
    let i = 0;
    while (!restart?.done || Date.now() < restart.endedAt + 3000) {
      const base = APIS[i++ % 2];
      submitted.push(await submit(base).catch((err) => ({ status: 0, text: err.message, at: Date.now() })));
      await sleep(TRICKLE_MS);
    }
  })();
  await sleep(restartStarted - Date.now());
  restart = { done: false };
  log(`${COMPOSE} restart worker (jobs submitted every ${TRICKLE_MS} ms meanwhile)`);
  const code = await new Promise((resolve) => {
    const child = spawn('bash', ['-c', `${COMPOSE} restart worker`], { stdio: 'inherit' });
    child.on('exit', (status) => resolve(status));
  });
  restart = { done: true, endedAt: Date.now() };
  if (code !== 0) fail(`docker compose restart worker exited ${code}`);
  log(`workers restarted in ${restart.endedAt - restartStarted} ms`);
  await trickle;
  const refused = submitted.filter((s) => s.status !== 202);
  if (refused.length > 0)
    fail(`${refused.length} of ${submitted.length} submissions refused: ${JSON.stringify(refused.slice(0, 3))}`);
  const ended = new Map();
  await until(
    () => `${submitted.length - ended.size} of ${submitted.length} jobs never ended`,
    180_000,
    async () => {
      for (const s of submitted) {
        if (ended.has(s.jobId)) continue;
        const reply = await call(APIS[0], 'GET', s.statusUrl);
        if (reply.json?.status === 'completed' || reply.json?.status === 'failed')
          ended.set(s.jobId, { ...reply.json, seenAt: Date.now() });
      }
      return ended.size === submitted.length;
    },
    1000,
  );
  const failed = [...ended.values()].filter((j) => j.status !== 'completed');
  if (failed.length > 0)
    fail(`${failed.length} jobs failed: ${JSON.stringify(failed.slice(0, 3).map((j) => j.error))}`);
  const ids = new Set(submitted.map((s) => s.jobId));
  await until(
    () =>
      `webhooks missing for ${[...ids].filter((id) => !deliveries.some((d) => d.jobId === id)).length} of ${ids.size} jobs`,
    120_000,
    () =>
      [...ids].every((id) => deliveries.some((d) => d.jobId === id && d.event === 'job.completed' && d.signatureOk)),
    500,
  );
  const mine = deliveries.filter((d) => ids.has(d.jobId));
  const latencies = submitted
    .map((s) => mine.filter((d) => d.jobId === s.jobId).reduce((a, d) => Math.min(a, d.at - s.at), Infinity))
    .sort((a, b) => a - b);
  const retried = [...ended.values()].filter((j) => (j.retries ?? 0) > 0).length;
  summary.restart = {
    restartMs: restart.endedAt - restartStarted,
    submitted: submitted.length,
    completed: ended.size,
    webhooks: mine.length,
    duplicateWebhooks: mine.length - new Set(mine.map((d) => d.deliveryId)).size,
    retriedJobs: retried,
    webhookLatencyMs: { median: latencies[Math.floor(latencies.length / 2)], max: latencies.at(-1) },
  };
  log(
    `restart under load: ${submitted.length} jobs submitted, all completed, ${ids.size} webhooks (median ${summary.restart.webhookLatencyMs.median} ms, max ${summary.restart.webhookLatencyMs.max} ms after submission), ${retried} retried`,
  );
  console.log(`stack-check summary ${JSON.stringify(summary)}`);
} finally {
  relay.close();
  receiver.close();
  await sandbox.close();
}
process.exit(0);
