#!/usr/bin/env node
// RabbitMQ cluster (issue 31, bullet 7): jobs per second through the service with replicated
// queues (quorum, `queue.replicated: true`) on a three-node cluster against classic queues on one
// node of it, in interleaved rounds, as a ratio quorum / classic; then, with the quorum queues,
// the time from the loss (SIGKILL) of the node the service is connected to until the first job
// submitted after it is completed. The service is the real CLI (`serve`, embedded store, so the
// queue is what differs), in front of an upstream answering at once; each side on a fresh prefix.
// The cluster is `.ci/rabbitmq-cluster.sh start` in a directory of the bench's own, stopped at the
// end, or the one named by RABBITMQ_CLUSTER_DIR and RABBITMQ_CLUSTER_URLS.
// Run after `npm run build`:  node bench/cluster.mjs [--quick] [--rounds 3] [--jobs 600] [--concurrency 20]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { dossierBody } from '@opco-proxy/e2e';
import { freePort, pinning, pinSelf } from './lib/processes.mjs';
import { options, printRatios, QUICK } from './lib/rounds.mjs';
import { startOpcoProxy } from './lib/service.mjs';

const opts = options({
  rounds: { type: 'string' },
  jobs: { type: 'string' },
  concurrency: { type: 'string', default: '20' },
});
const ROUNDS = Number(opts.rounds ?? (QUICK ? 2 : 3));
const JOBS = Number(opts.jobs ?? (QUICK ? 200 : 600));
const CONCURRENCY = Number(opts.concurrency);
const SCRIPT = fileURLToPath(new URL('../.ci/rabbitmq-cluster.sh', import.meta.url));
const run = promisify(execFile);
const began = Date.now();
const progress = (message) =>
  process.stderr.write(`[cluster ${((Date.now() - began) / 1000).toFixed(1)} s] ${message}\n`);

pinSelf();
const own = !process.env.RABBITMQ_CLUSTER_DIR;
const dir = process.env.RABBITMQ_CLUSTER_DIR ?? mkdtempSync(join(tmpdir(), 'bench-cluster-'));
if (own) {
  progress(`starting a three-node cluster in ${dir}`);
  const { stdout } = await run(SCRIPT, ['start', dir]);
  progress(
    stdout
      .trim()
      .split('\n')
      .find((line) => line.startsWith('cluster started')),
  );
}
const urls = (process.env.RABBITMQ_CLUSTER_URLS ?? readFileSync(join(dir, 'urls'), 'utf8')).trim().split(',');
const upstream = await startUpstream();
try {
  await main();
} finally {
  upstream.close();
  if (own) progress((await run(SCRIPT, ['stop', dir])).stdout.trim());
}

async function main() {
  const sides = {
    'quorum, 3 nodes': { url: urls, replicated: true },
    'classic, 1 node': { url: urls[0], replicated: false },
  };
  const results = [];
  for (let round = 0; round < ROUNDS; round++) {
    const names = Object.keys(sides);
    const order = round % 2 ? names.reverse() : names;
    const seen = {};
    for (const name of order) {
      seen[name] = await throughput(sides[name], `r${round}`);
      progress(`round ${round + 1} ${name}: ${seen[name].toFixed(1)} jobs/s`);
    }
    results.push(seen);
  }
  const loss = await nodeLoss();
  console.log(
    `RabbitMQ cluster: ${JOBS} single-step jobs per side and round, ${CONCURRENCY} submissions at once, ${ROUNDS} rounds; ${pinning()}`,
  );
  for (const [i, r] of results.entries())
    console.log(
      `  round ${i + 1}: ${Object.entries(r)
        .map(([name, v]) => `${name} ${v.toFixed(1)} jobs/s`)
        .join(', ')}`,
    );
  printRatios('ratios', [
    {
      name: 'jobs/s, quorum on 3 nodes / classic on 1 node',
      values: results.map((r) => r['quorum, 3 nodes'] / r['classic, 1 node']),
    },
  ]);
  console.log(
    `node loss (quorum, kill -9 of the node in use): first job submitted after it completed ${loss.firstCompletedMs} ms after the kill; ` +
      `${loss.accepted} accepted in the ${loss.windowS} s after it, ${loss.completed} completed, ${loss.unavailable} answers 503; opco1 back in ${loss.restartS} s`,
  );
}

/** Jobs per second: JOBS submissions, CONCURRENCY at a time, until the service reports them all completed. */
async function throughput(queue, label) {
  const service = await startService(queue, label);
  try {
    const start = Date.now();
    let next = 0;
    const statuses = {};
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < JOBS) {
          next++;
          const reply = await submit(service);
          statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        }
      }),
    );
    if (statuses[202] !== JOBS) throw new Error(`submissions answered ${JSON.stringify(statuses)}`);
    await completed(service, JOBS, 120_000);
    return JOBS / ((Date.now() - start) / 1000);
  } finally {
    await service.stop();
  }
}

/** Kills node 1 (the service's) under a steady stream of submissions; reads completedAt of those sent after. */
async function nodeLoss() {
  const service = await startService({ url: urls, replicated: true }, 'loss');
  const windowS = 10;
  try {
    for (let i = 0; i < 50; i++) await submit(service);
    await completed(service, 50, 30_000);
    const pid = Number(readFileSync(join(dir, 'node1', 'pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    progress(`killed opco1 (pid ${pid})`);
    const sent = [];
    while (Date.now() - killedAt < windowS * 1000) {
      sent.push(submit(service));
      await sleep(50);
    }
    const replies = await Promise.all(sent);
    const accepted = replies.filter((r) => r.status === 202);
    await completed(service, 50 + accepted.length, 60_000);
    const completedAt = [];
    for (const reply of accepted) {
      const job = await (await fetch(`${service.url}${reply.body.statusUrl}`, { headers: service.headers })).json();
      if (job.status === 'completed') completedAt.push(Date.parse(job.completedAt));
    }
    const restarting = Date.now();
    await run(SCRIPT, ['start-node', dir, '1']);
    return {
      firstCompletedMs: Math.min(...completedAt) - killedAt,
      accepted: accepted.length,
      completed: completedAt.length,
      unavailable: replies.filter((r) => r.status === 503).length,
      windowS,
      restartS: Math.round((Date.now() - restarting) / 1000),
    };
  } finally {
    await service.stop();
  }
}

function startService(queue, label) {
  const prefix = `bench_${label}_${Date.now()}`;
  return startOpcoProxy({
    upstreamUrl: upstream.url,
    rateLimit: { limit: 100_000, windowMs: 1000 },
    config: {
      store: { type: 'embedded' },
      queue: { type: 'rabbitmq', prefix, ...queue },
      jobs: { backoffMs: [100, 200, 400] },
    },
  });
}

async function submit(service) {
  const response = await fetch(`${service.url}/sandbox/dossiers`, {
    method: 'POST',
    headers: { ...service.headers, 'content-type': 'application/json' },
    body: JSON.stringify(dossierBody()),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Waits until the service's /metrics count `count` completed jobs. */
async function completed(service, count, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const done = [...text.matchAll(/^opco_proxy_jobs_ended_total\{[^}]*status="completed"[^}]*\} (\d+)/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    if (done >= count) return;
    if (Date.now() > deadline) throw new Error(`${done} of ${count} jobs completed in ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** The upstream: a token and POST /v1/dossiers answered at once, in this process. */
async function startUpstream() {
  const port = await freePort();
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const reply = (status, body) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/oauth/token')
        return reply(200, { access_token: 'bench-token', token_type: 'Bearer', expires_in: 3600 });
      if (req.method === 'POST' && req.url === '/v1/dossiers')
        return reply(201, { status: 'success', numeroInterne: `D-${++n}`, numeroExterne: 'EXT', comment: null });
      if (req.method === 'GET' && req.url.startsWith('/v2/dossiers'))
        return reply(200, { status: 'success', data: [], pagination: { page: 1, pageSize: 100, total: 0 } });
      reply(404, { status: 'error', message: 'not here' });
    });
  });
  server.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}
