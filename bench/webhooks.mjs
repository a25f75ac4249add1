#!/usr/bin/env node
// Webhook fan-out (issue 11, point 5; goal: >= 0.5x a bare signing sender with keep-alive, p99
// event -> receiver <= 2 s under a 2,000-delivery burst). The service (development mode, so http
// loopback receivers are allowed; embedded store) with `--webhooks` webhooks subscribed to
// job.completed, and `--events` jobs posted at once against a fast fixed upstream: every job's
// completion fans out to every webhook. The baseline is a bare sender (node:http keep-alive agent,
// the same HMAC headers, `--concurrency` requests in flight) sending the same number of
// notifications to the same receiver. Both sides are timed from the notification's own timestamp
// (the event's time) to its arrival at the receiver: deliveries/s = count / (last arrival -
// first timestamp), and p99 of (arrival - timestamp). Interleaved rounds; min/median/max ratios.
// CPU per delivery: the service's own CPU time over its side of a round (the jobs that emit the
// events included) and the bare sender's from its first send (its start-up left out), each
// divided by the deliveries: steadier than the rates on a busy machine.
// Run after `npm run build`:  node bench/webhooks.mjs [--quick] [--rounds 3] [--webhooks 20] [--events 100] [--concurrency 16] [--cpu-prof DIR]
import { createHmac } from 'node:crypto';
import { createServer, Agent, request } from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { dossierBody } from '@opco-proxy/e2e';
import { pinSelf, pinning, startProcess, freePort, SERVICE_CPU } from './lib/processes.mjs';
import { QUICK, interleave, options, printRatios, summary } from './lib/rounds.mjs';
import { startOpcoProxy } from './lib/service.mjs';
import { printProfiles } from './lib/profile-summary.mjs';

const args = options({
  rounds: { type: 'string' },
  webhooks: { type: 'string', default: '20' },
  events: { type: 'string', default: '100' },
  concurrency: { type: 'string', default: '16' },
  'cpu-prof': { type: 'string' },
  child: { type: 'string' },
  target: { type: 'string' },
  count: { type: 'string' },
});
const fmt = (ms) => ms.toFixed(0);
// A client's pool of keep-alive connections: a burst of one connection per request from one
// address would meet the service's connections-per-address cap (64, P21) instead of its work.
const postAgent = new Agent({ keepAlive: true, maxSockets: 32 });
const BENCH_WAIT = Number(process.env.BENCH_WAIT ?? 120_000);
if (args.child === 'sender')
  await bareSender(args.target, Number(args.webhooks), Number(args.count), Number(args.concurrency));
else await main();

// ---- the baseline: a bare signing sender with keep-alive ----------------------------------------

async function bareSender(target, webhooks, count, concurrency) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const secrets = Array.from({ length: webhooks }, (_, i) =>
    createHmac('sha256', 'bench').update(String(i)).digest('hex'),
  );
  const timestamp = new Date().toISOString();
  // From here: the process's start-up is not the sending's.
  const cpuStart = process.cpuUsage();
  let next = 0;
  const send = (n) =>
    new Promise((ok, fail) => {
      const secret = secrets[n % webhooks];
      const id = String(n).padStart(32, '0');
      const body = JSON.stringify({
        event: 'job.completed',
        opcoId: 'sandbox',
        timestamp,
        data: { jobId: id, type: 'post-dossier', status: 'completed' },
      });
      const unix = Math.floor(Date.now() / 1000);
      const req = request(
        `${target}/w${n % webhooks}`,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'bench',
            'content-length': Buffer.byteLength(body),
            'svc-signature': createHmac('sha256', secret).update(body).digest('hex'),
            'svc-event': 'job.completed',
            'svc-delivery-id': id,
            'svc-timestamp': timestamp,
            'webhook-id': id,
            'webhook-timestamp': String(unix),
            'webhook-signature': `v1,${createHmac('sha256', Buffer.from(secret, 'hex')).update(`${id}.${unix}.${body}`).digest('base64')}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', ok);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  const lane = async () => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  agent.destroy();
  const { user, system } = process.cpuUsage(cpuStart);
  console.log(`CPU_US ${user + system}`);
}

// ---- the parent ---------------------------------------------------------------------------------

async function main() {
  const rounds = Number(args.rounds ?? (QUICK ? 2 : 3));
  const webhooks = Number(args.webhooks);
  const events = Number(args.events ?? 100);
  const concurrency = Number(args.concurrency);
  const expected = webhooks * events;
  pinSelf();
  const upstream = await startUpstream();
  const receiver = await startReceiver();
  // A budget that never gates the events' jobs, with as many slots as a large profile: the store
  // budget keeps one slot per call of the window and reads them, so 100,000 slots (as here before)
  // spent most of the service's CPU counting slots no deployment has (profiles: 30 to 60 a minute).
  const service = await startOpcoProxy({
    upstreamUrl: upstream.url,
    rateLimit: { limit: Math.max(1000, 2 * events), windowMs: 1000 },
    config: { mode: 'development', logLevel: 'warn' },
    nodeArgs: args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [],
  });
  const stopping = [service];
  process.once('SIGTERM', () => void service.stop().finally(() => process.exit(143)));
  let failed = false;
  try {
    for (let i = 0; i < webhooks; i++) {
      const reply = await fetch(`${service.url}/webhooks`, {
        method: 'POST',
        headers: { ...service.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ callbackUrl: `${receiver.url}/w${i}`, events: ['job.completed'] }),
      });
      if (reply.status !== 201) throw new Error(`webhook registration answered ${reply.status}: ${await reply.text()}`);
    }
    const serviceSide = async () => {
      receiver.reset(expected);
      const cpuBefore = service.cpuSeconds();
      // The burst: every job posted at once; each completion fans out to every webhook.
      const posted = await Promise.all(
        Array.from({ length: events }, () =>
          post(`${service.url}/sandbox/dossiers`, service.headers, JSON.stringify(dossierBody())),
        ),
      );
      if (process.env.BENCH_DEBUG) console.log('posted', posted);
      if (posted.some((s) => s !== 202)) throw new Error(`job posts answered ${[...new Set(posted)].join(', ')}`);
      const result = await receiver.done(BENCH_WAIT);
      if (process.env.BENCH_DEBUG) console.log('service', result);
      return { ...result, cpuUsPerDelivery: ((service.cpuSeconds() - cpuBefore) * 1e6) / expected };
    };
    const bareSide = async () => {
      receiver.reset(expected);
      const sender = startProcess({
        name: 'bare-sender',
        command: process.execPath,
        cpu: SERVICE_CPU,
        capture: true,
        args: [
          fileURLToPath(import.meta.url),
          '--child',
          'sender',
          '--target',
          receiver.url,
          '--webhooks',
          String(webhooks),
          '--count',
          String(expected),
          '--concurrency',
          String(concurrency),
        ],
      });
      const exited = once(sender.child, 'exit');
      const result = await receiver.done(BENCH_WAIT);
      if (process.env.BENCH_DEBUG) console.log('bare', result);
      await exited;
      const cpuUs = Number(/CPU_US (\d+)/.exec(sender.output())?.[1]);
      return { ...result, cpuUsPerDelivery: cpuUs / expected };
    };
    await interleave(1, { service: serviceSide, bare: bareSide }); // warm-up
    const results = await interleave(rounds, { service: serviceSide, bare: bareSide });
    failed = results.some((r) => r.service.count < expected || r.bare.count < expected);
    console.log(
      `webhook fan-out: ${webhooks} webhooks x ${events} events = ${expected} deliveries per round, ${rounds} interleaved rounds; bare sender: node:http keep-alive, ${concurrency} in flight; ${pinning()}`,
    );
    printRatios('ratio = opco-proxy / bare signing sender', [
      { name: 'deliveries/s', values: results.map((r) => r.service.rate / r.bare.rate), goal: '>= 0.5' },
      { name: 'CPU per delivery', values: results.map((r) => r.service.cpuUsPerDelivery / r.bare.cpuUsPerDelivery) },
    ]);
    const p99 = summary(results.map((r) => r.service.p99Ms));
    console.log(
      `opco-proxy p99 event -> receiver under the ${expected}-delivery burst: min ${fmt(p99.min)}  median ${fmt(p99.median)}  max ${fmt(p99.max)} ms   (goal <= 2000)`,
    );
    console.log('per round, absolute:');
    for (const r of results)
      console.log(
        `  opco-proxy ${r.service.rate.toFixed(0)}/s p50 ${fmt(r.service.p50Ms)} p99 ${fmt(r.service.p99Ms)} ms (${r.service.count}) ${fmt(r.service.cpuUsPerDelivery)} µs CPU/delivery   bare ${r.bare.rate.toFixed(0)}/s p50 ${fmt(r.bare.p50Ms)} p99 ${fmt(r.bare.p99Ms)} ms (${r.bare.count}) ${fmt(r.bare.cpuUsPerDelivery)} µs CPU/delivery`,
      );
    if (failed) console.log('ERRORS: some deliveries did not arrive; exiting 1');
  } catch (err) {
    console.error(err);
    failed = true;
  } finally {
    for (const proc of stopping.reverse()) await proc.stop();
    receiver.close();
    upstream.close();
  }
  if (args['cpu-prof'])
    printProfiles(args['cpu-prof'], 'top self time of the service (PROFILED: ratios not comparable)');
  process.exit(failed ? 1 : 0);
}

/** One job POST, answered status; each on a connection of its own, as 100 clients would. */
function post(url, headers, body) {
  return new Promise((ok, fail) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: postAgent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** Records arrival time minus the notification's timestamp; `done` waits for the expected count. */
async function startReceiver() {
  let arrivals = [];
  let expected = 0;
  let wake = () => {};
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const at = Date.now();
      try {
        arrivals.push({ at, sent: Date.parse(JSON.parse(raw).timestamp) });
      } catch {
        arrivals.push({ at, sent: at });
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      if (arrivals.length >= expected) wake();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(await freePort(), '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    reset(count) {
      arrivals = [];
      expected = count;
    },
    async done(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.length < expected && Date.now() < deadline)
        await Promise.race([new Promise((ok) => (wake = ok)), sleep(200)]);
      await sleep(200); // duplicates, if any, are counted too
      const list = arrivals;
      const latencies = list.map((a) => a.at - a.sent).sort((a, b) => a - b);
      const first = Math.min(...list.map((a) => a.sent));
      const last = Math.max(...list.map((a) => a.at));
      const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
      return {
        count: list.length,
        rate: list.length / (Math.max(1, last - first) / 1000),
        p50Ms: pct(0.5),
        p99Ms: pct(0.99),
      };
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A fast upstream for the sandbox adapter: a token and POST /v1/dossiers answered at once. */
async function startUpstream() {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status, body) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (req.url === '/oauth/token')
        return json(200, { access_token: 'bench-token', token_type: 'Bearer', expires_in: 3600 });
      if (req.method === 'POST' && req.url === '/v1/dossiers')
        return json(201, { status: 'success', numeroInterne: `D-${++n}`, numeroExterne: 'EXT', comment: null });
      json(404, { status: 'error', message: 'not here' });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(await freePort(), '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
