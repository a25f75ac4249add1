#!/usr/bin/env node
// Cached read (issue 11: >= 0.8x bare Koa serving the same bytes, p99 <= 2x Koa's; issue 40: >= 1.0x):
// `GET /sandbox/dossiers/etats` (about 12 KB) answered from the cache at 50 connections, against
// bare Koa answering the same bytes, interleaved rounds; prints min / median / max of the ratios
// of req/s, p99 and CPU per request (service / Koa); then two floors: Koa, and node:http as the
// service's early path answers, each writing the access line and the request metrics owed.
// `--root DIR` adds another checkout's build as a third side (this / other: a before and an after).
// Run after `npm run build`:  node bench/cached-get.mjs [--rounds 5] [--duration 5] [--connections 50] [--cpu-prof DIR] [--root DIR] [--quick]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pinSelf, pinning } from './lib/processes.mjs';
import { GENERATOR } from './lib/load.mjs';
import { QUICK, interleave, options, printRatios } from './lib/rounds.mjs';
import { measure, describe } from './lib/measure.mjs';
import { recordUpstream, startFixedUpstream, startLibProcess, startOpcoProxy } from './lib/service.mjs';
import { printProfiles } from './lib/profile-summary.mjs';

const args = options({
  rounds: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string', default: '50' },
  'cpu-prof': { type: 'string' },
  root: { type: 'string' },
});
const rounds = Number(args.rounds ?? (QUICK ? 3 : 5));
const durationS = Number(args.duration ?? (QUICK ? 2 : 5));
const connections = Number(args.connections);
const PATH = '/sandbox/dossiers/etats';
pinSelf();

const recorded = await recordUpstream();
const upstream = await startFixedUpstream(recorded);
const nodeArgs = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [];
const service = await startOpcoProxy({ upstreamUrl: upstream.url, cacheTtlS: 3600, nodeArgs });
// --root: another checkout's build as a third side, for a before and an after in one run.
const other = args.root
  ? await startOpcoProxy({
      upstreamUrl: upstream.url,
      cacheTtlS: 3600,
      cli: join(resolve(args.root), 'core/dist/src/cli.js'),
    })
  : undefined;
const stopping = [upstream, service, ...(other ? [other] : [])];
let failed = false;
try {
  const first = await fetch(service.url + PATH, { headers: service.headers });
  const answer = await first.text();
  const hit = await fetch(service.url + PATH, { headers: service.headers });
  if (first.status !== 200 || hit.headers.get('x-cache') !== 'HIT' || (await hit.text()) !== answer)
    throw new Error(`the service does not serve the cached answer: ${first.status} ${hit.headers.get('x-cache')}`);
  const file = join(mkdtempSync(join(tmpdir(), 'bench-cached-')), 'answer.json');
  writeFileSync(file, answer);
  const koa = await startLibProcess('koa', 'koa-static.mjs', ['--body', file]);
  stopping.push(koa);
  if ((await (await fetch(koa.url)).text()) !== answer) throw new Error('Koa does not serve the same bytes');
  // The floor: Koa serving the same bytes with the access line and the metrics each request owes.
  const floor = await startLibProcess('koa-observed', 'koa-static.mjs', ['--body', file, '--observed']);
  stopping.push(floor);
  // The floor without Koa: node:http answering with what is owed, as the service's early path does.
  const bare = await startLibProcess('node-observed', 'koa-static.mjs', ['--body', file, '--observed', '--bare']);
  stopping.push(bare);

  const sides = {
    service: () => measure(service, { path: PATH, headers: service.headers, connections, durationS }),
    koa: () => measure(koa, { path: PATH, connections, durationS }),
    floor: () => measure(floor, { path: PATH, connections, durationS }),
    bare: () => measure(bare, { path: PATH, connections, durationS }),
    ...(other && { other: () => measure(other, { path: PATH, headers: other.headers, connections, durationS }) }),
  };
  if (other) await fetch(other.url + PATH, { headers: other.headers }).then((r) => r.text());
  const warm = (side, headers) => () => measure(side, { path: PATH, headers, connections, durationS: 1 });
  await interleave(1, {
    service: warm(service, service.headers),
    koa: warm(koa),
    floor: warm(floor),
    bare: warm(bare),
  }); // warm-up
  const results = await interleave(rounds, sides);
  failed = results.some((r) => Object.values(r).some((side) => side.errors > 0));

  console.log(
    `cached GET ${PATH} (${Buffer.byteLength(answer)} bytes), c=${connections}, ${durationS} s x ${rounds} interleaved rounds, load by ${GENERATOR}, ${pinning()}${nodeArgs.length ? ', SERVICE PROFILED (--cpu-prof): ratios are not comparable' : ''}`,
  );
  printRatios('ratio = opco-proxy / bare Koa serving the same bytes', [
    { name: 'req/s', values: results.map((r) => r.service.rps / r.koa.rps), goal: '>= 1.0' },
    { name: 'p99', values: results.map((r) => r.service.p99Ms / r.koa.p99Ms), goal: '<= 2' },
    { name: 'CPU/req', values: results.map((r) => r.service.cpuUsPerRequest / r.koa.cpuUsPerRequest) },
    { name: 'RSS', values: results.map((r) => r.service.rssBytes / r.koa.rssBytes) },
  ]);
  // Each floor against Koa, and the service against the floor, on the same rows.
  const floorRows = (side, name) => [
    { name: `${name} req/s / Koa`, values: results.map((r) => r[side].rps / r.koa.rps) },
    { name: `${name} CPU/req / Koa`, values: results.map((r) => r[side].cpuUsPerRequest / r.koa.cpuUsPerRequest) },
    { name: `opco-proxy req/s / ${name}`, values: results.map((r) => r.service.rps / r[side].rps) },
    {
      name: `opco-proxy CPU/req / ${name}`,
      values: results.map((r) => r.service.cpuUsPerRequest / r[side].cpuUsPerRequest),
    },
  ];
  printRatios(
    'the floor: Koa serving the same bytes, with the access line and the two request metrics',
    floorRows('floor', 'floor'),
  );
  // Issue 40's goal (>= 1.0x Koa) leaves the edge and the cache only what this floor gains over Koa.
  printRatios(
    'the floor without Koa: node:http answering the same bytes, with the same access line and metrics',
    floorRows('bare', 'node floor'),
  );
  if (other) {
    printRatios(`ratio = this checkout / ${args.root}`, [
      { name: 'req/s', values: results.map((r) => r.service.rps / r.other.rps) },
      { name: 'CPU/req', values: results.map((r) => r.service.cpuUsPerRequest / r.other.cpuUsPerRequest) },
      { name: 'RSS', values: results.map((r) => r.service.rssBytes / r.other.rssBytes) },
    ]);
  }
  console.log('last round, absolute:');
  const last = results[results.length - 1];
  console.log(
    `  ${describe('opco-proxy', last.service)}\n  ${describe('koa', last.koa)}\n  ${describe('floor', last.floor)}\n  ${describe('node floor', last.bare)}${other ? `\n  ${describe('other (--root)', last.other)}` : ''}`,
  );
  if (failed) console.log('ERRORS: some requests failed (see above); exiting 1');
} finally {
  for (const proc of stopping.reverse()) await proc.stop();
}
if (args['cpu-prof']) printProfiles(args['cpu-prof']);
process.exit(failed ? 1 : 0);
