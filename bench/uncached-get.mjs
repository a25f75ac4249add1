#!/usr/bin/env node
// Uncached proxied read (issue 11, goals: >= 0.35x nginx proxy_pass to the same upstream, which
// issue 40 restated as >= 0.25x; added p50 <= 2 ms at c=50): `GET /sandbox/dossiers/etats` with the route's cache lifetime set to 0,
// so every request is one upstream call through the pipeline (admission by the store budget,
// the upstream client, the response transforms and checks), against nginx `proxy_pass` (when
// installed) and a bare node:http + undici Pool proxy, all to one fast upstream replaying a
// recorded 12 KB answer. Then, in the same run:
// - added p50: p50 through each proxy minus p50 straight to the upstream, at a fixed offered rate
//   (open loop, --rate, 50 connections), so the figure is the hop's own latency, not queueing;
//   and the same for one client at a time (one connection, 50 reads a second; issue 40: <= 1 ms);
// - the upstream client's cost per call: got (as it was called, and tuned) against undici;
// - the answer's own cost: what the pipeline does to the 12 KB once it has it (parse, depth bound,
//   transforms, drift check, stringify), with the service's functions, and so the highest ratio
//   to nginx that a proxy adding only that to the bare undici proxy could reach (the goal's floor).
// `--root DIR` adds another checkout's build as a side of its own (this / other: a before and an after).
// Run after `npm run build`:  node bench/uncached-get.mjs [--rounds 5] [--duration 5] [--rate 200] [--cpu-prof DIR] [--root DIR] [--quick]
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, pinSelf, pinning, PINNED, SERVICE_CPU } from './lib/processes.mjs';
import { GENERATOR, latencyAtRate } from './lib/load.mjs';
import { QUICK, interleave, options, printRatios, summary } from './lib/rounds.mjs';
import { measure, describe } from './lib/measure.mjs';
import { NGINX, startNginx } from './lib/nginx.mjs';
import { recordUpstream, startFixedUpstream, startLibProcess, startOpcoProxy } from './lib/service.mjs';
import { waitForHttp } from './lib/processes.mjs';
import { printProfiles } from './lib/profile-summary.mjs';

const args = options({
  rounds: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string', default: '50' },
  rate: { type: 'string', default: '200' },
  'cpu-prof': { type: 'string' },
  root: { type: 'string' },
});
const rounds = Number(args.rounds ?? (QUICK ? 3 : 5));
const durationS = Number(args.duration ?? (QUICK ? 2 : 5));
const connections = Number(args.connections);
const rate = Number(args.rate);
const PATH = '/sandbox/dossiers/etats?numeroPage=1';
const UPSTREAM_PATH = '/v2/dossiers/etats?numeroPage=1';
pinSelf();

const recorded = await recordUpstream();
const upstream = await startFixedUpstream(recorded);
const nodeArgs = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [];
// A budget the run never exhausts: 200 slots free again 10 ms after each call ends.
const service = await startOpcoProxy({
  upstreamUrl: upstream.url,
  cacheTtlS: 0,
  rateLimit: { limit: 200, windowMs: 10 },
  nodeArgs,
});
const other = args.root
  ? await startOpcoProxy({
      upstreamUrl: upstream.url,
      cacheTtlS: 0,
      rateLimit: { limit: 200, windowMs: 10 },
      cli: join(resolve(args.root), 'core/dist/src/cli.js'),
    })
  : undefined;
const stopping = [upstream, service, ...(other ? [other] : [])];
let failed = false;
try {
  const probe = await fetch(service.url + PATH, { headers: service.headers });
  if (probe.status !== 200)
    throw new Error(`the service does not proxy: ${probe.status} ${(await probe.text()).slice(0, 300)}`);
  const proxies = { 'opco-proxy': { proc: service, path: PATH, headers: service.headers } };
  if (other) proxies['other (--root)'] = { proc: other, path: PATH, headers: other.headers };
  if (NGINX) {
    const port = await freePort();
    const nginx = { ...startNginx({ port, upstream: upstream.url }), url: `http://127.0.0.1:${port}` };
    stopping.push(nginx);
    await waitForHttp(nginx.url, nginx);
    proxies.nginx = { proc: nginx, path: UPSTREAM_PATH };
  }
  const undici = await startLibProcess('undici-proxy', 'undici-proxy.mjs', ['--upstream', upstream.url]);
  stopping.push(undici);
  proxies['undici proxy'] = { proc: undici, path: UPSTREAM_PATH };
  const baseline = NGINX ? 'nginx' : 'undici proxy';

  const run = (d) =>
    Object.fromEntries(
      Object.entries(proxies).map(([name, p]) => [
        name,
        () => measure(p.proc, { path: p.path, headers: p.headers, connections, durationS: d }),
      ]),
    );
  // Warm-up: a fresh process's first seconds cost it twice its steady CPU per read (JIT, the young
  // generation's growth: RESULTS.md, issue 40's third session), which 1 s did not cover.
  await interleave(1, run(3));
  const results = await interleave(rounds, run(durationS));

  // Added latency at a fixed rate: each proxy's p50 minus the upstream's own, measured in turn.
  const direct = { proc: upstream, path: UPSTREAM_PATH };
  const added = await interleave(
    QUICK ? 1 : 3,
    Object.fromEntries(
      [['upstream', direct], ...Object.entries(proxies)].map(([name, p]) => [
        name,
        () =>
          latencyAtRate({ url: p.proc.url + p.path, headers: p.headers, connections, rate, durationS: QUICK ? 2 : 4 }),
      ]),
    ),
  );
  // Issue 40's goal: what the proxy adds for one client at a time (one connection, 50 reads a second, rarely two in flight).
  const alone = await interleave(
    QUICK ? 1 : 3,
    Object.fromEntries(
      [['upstream', direct], ...Object.entries(proxies)].map(([name, p]) => [
        name,
        () =>
          latencyAtRate({
            url: p.proc.url + p.path,
            headers: p.headers,
            connections: 1,
            rate: 50,
            durationS: QUICK ? 2 : 4,
          }),
      ]),
    ),
  );

  const clientRounds = JSON.parse(
    execFileSync(
      PINNED ? 'taskset' : process.execPath,
      [
        ...(PINNED ? ['-c', SERVICE_CPU, process.execPath] : []),
        fileURLToPath(new URL('./lib/client-cost.mjs', import.meta.url)),
        '--upstream',
        upstream.url,
        '--calls',
        QUICK ? '2000' : '5000',
        '--rounds',
        QUICK ? '3' : '5',
      ],
      { encoding: 'utf8' },
    ),
  );

  const answerRounds = JSON.parse(
    execFileSync(
      PINNED ? 'taskset' : process.execPath,
      [
        ...(PINNED ? ['-c', SERVICE_CPU, process.execPath] : []),
        fileURLToPath(new URL('./lib/answer-cost.mjs', import.meta.url)),
        '--answer',
        recorded.bodyFile,
        '--calls',
        QUICK ? '2000' : '5000',
      ],
      { encoding: 'utf8' },
    ),
  );

  failed = [results, added, alone].some((runs) => runs.some((r) => Object.values(r).some((m) => m.errors > 0)));
  console.log(
    `uncached proxied GET (${recorded.bytes} bytes upstream), c=${connections}, ${durationS} s x ${rounds} interleaved rounds, load by ${GENERATOR}, ${pinning()}; baseline: ${NGINX ? 'nginx proxy_pass (1 worker, upstream keep-alive)' : 'a bare node:http + undici Pool proxy (nginx not installed)'}${nodeArgs.length ? ', SERVICE PROFILED (--cpu-prof): ratios are not comparable' : ''}`,
  );
  const rows = [
    {
      name: `req/s vs ${baseline}`,
      values: results.map((r) => r['opco-proxy'].rps / r[baseline].rps),
      goal: '>= 0.25',
    },
    {
      name: `CPU/req vs ${baseline}`,
      values: results.map((r) => r['opco-proxy'].cpuUsPerRequest / r[baseline].cpuUsPerRequest),
    },
  ];
  if (NGINX)
    rows.push(
      { name: 'req/s vs undici proxy', values: results.map((r) => r['opco-proxy'].rps / r['undici proxy'].rps) },
      { name: 'undici proxy vs nginx', values: results.map((r) => r['undici proxy'].rps / r.nginx.rps) },
    );
  printRatios('ratio = opco-proxy / baseline, same run', rows);
  if (other) {
    printRatios(`ratio = this checkout / ${args.root}`, [
      { name: 'req/s', values: results.map((r) => r['opco-proxy'].rps / r['other (--root)'].rps) },
      {
        name: 'CPU/req',
        values: results.map((r) => r['opco-proxy'].cpuUsPerRequest / r['other (--root)'].cpuUsPerRequest),
      },
    ]);
  }
  console.log(
    `added p50 at ${rate} req/s offered over ${connections} connections (p50 through the proxy - p50 straight to the upstream), ms:`,
  );
  for (const name of Object.keys(proxies)) {
    const s = summary(added.map((r) => r[name].p50Ms - r.upstream.p50Ms));
    console.log(
      `  ${name.padEnd(13)} min ${s.min.toFixed(2)}  median ${s.median.toFixed(2)}  max ${s.max.toFixed(2)}${name === 'opco-proxy' ? '   (goal <= 2)' : ''}`,
    );
  }
  printRatios(
    'added p50 at one client (one connection, 50 reads a second), ms:',
    Object.keys(proxies).map((name) => ({
      name,
      values: alone.map((r) => r[name].p50Ms - r.upstream.p50Ms),
      ...(name === 'opco-proxy' && { goal: '<= 1' }),
    })),
  );
  printRatios(
    'upstream client, CPU per call (same upstream, 50 in flight, one process on the service core), ratio to undici Pool:',
    [
      {
        name: 'got as called before',
        values: clientRounds.map((r) => r['got as called'] / r['undici pool']),
        goal: 'keep got if tuned <= 1.2',
      },
      { name: 'got tuned', values: clientRounds.map((r) => r['got tuned'] / r['undici pool']) },
      { name: 'undici request()', values: clientRounds.map((r) => r['undici request'] / r['undici pool']) },
      { name: "the service's client", values: clientRounds.map((r) => r['opco-proxy client'] / r['undici pool']) },
    ],
  );
  // One core does 1e6 µs of work a second: a proxy costing the undici proxy's CPU plus the answer's
  // cannot serve more than 1e6 / that, nor more than the load generator drives through nginx.
  const answerUs = answerRounds.total;
  console.log(
    `the answer's own cost, CPU µs per answer (service's functions, one process on the service core): ${Object.entries(
      answerRounds,
    )
      .map(([n, us]) => `${n} ${us.toFixed(1)}`)
      .join(', ')}`,
  );
  const rowsAbove = [
    {
      name: `best reachable req/s vs ${baseline}`,
      values: results.map(
        (r) => Math.min(1e6 / (r['undici proxy'].cpuUsPerRequest + answerUs), r[baseline].rps) / r[baseline].rps,
      ),
    },
  ];
  rowsAbove.push({
    name: 'pipeline µs/req beyond it',
    values: results.map((r) => r['opco-proxy'].cpuUsPerRequest - r['undici proxy'].cpuUsPerRequest - answerUs),
    digits: 0,
  });
  printRatios(
    `the floor: a proxy costing the undici proxy's CPU plus the answer's own (goal >= 0.25 is out of reach where this is below it)`,
    rowsAbove,
  );
  const last = results[results.length - 1];
  console.log('last round, absolute:');
  for (const [name, m] of Object.entries(last)) console.log(`  ${describe(name, m)}`);
  console.log(
    `  client CPU per call: ${Object.entries(clientRounds[clientRounds.length - 1])
      .map(([n, us]) => `${n} ${us.toFixed(0)} µs`)
      .join(', ')}`,
  );
  if (failed) console.log('ERRORS: some requests failed; exiting 1');
} finally {
  for (const proc of stopping.reverse()) await proc.stop();
}
if (args['cpu-prof']) printProfiles(args['cpu-prof']);
process.exit(failed ? 1 : 0);
