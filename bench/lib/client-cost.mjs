#!/usr/bin/env node
// CPU per upstream call of got (as the upstream client called it, and tuned: keep-alive agent,
// no hooks) and of the service's own upstream client (core's UpstreamClient: its headers, deadline,
// bounded read, JSON parse and depth check) against undici's Pool, to the same upstream, in one
// process on the service core, interleaved rounds. Prints one JSON line: per-round CPU µs per call
// of each client.
//   node bench/lib/client-cost.mjs --upstream URL [--calls 4000] [--rounds 5]
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import got from 'got';
import { Pool, request as undiciRequest } from 'undici';
import { UpstreamClient } from '../../core/dist/src/pipeline/upstream-client.js';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    calls: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '5' },
  },
});
const url = `${values.upstream}/v2/dossiers/etats`;
const calls = Number(values.calls);
const IN_FLIGHT = 50;
const headers = {
  'x-api-key': 'k',
  editeur: 'e',
  logiciel: 'l',
  version: 'v',
  accept: 'application/json',
  authorization: 'Bearer t',
};
const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });
const service = new UpstreamClient({
  publisher: { editeur: 'e', logiciel: 'l', version: 'v' },
  timeoutMs: 30_000,
  maxAnswerBytes: 8 << 20,
});
service.authenticate('bench', { headers: async () => ({ authorization: 'Bearer t' }), refused: () => false });
const route = 'GET /dossiers/etats';
const routeProfile = { upstream: '/v2/dossiers/etats' };
const opco = { id: 'bench', baseUrl: values.upstream, profile: { routes: { [route]: routeProfile } } };
/** A call context as the pipeline hands it to the client (core's CallContext), made anew per call. */
const callContext = () => ({
  opco,
  route,
  routeProfile,
  method: 'GET',
  tenant: { hash: 'bench', apiKey: 'k' },
  query: { numeroPage: '1' },
  priority: 1,
  synchronous: true,
  upstreamHeaders: {},
  warnings: [],
  startedAt: 0,
  cache: 'none',
});
const pool = new Pool(values.upstream, { connections: 64 });

const clients = {
  // As core/src/upstream-client.ts called it before: per-call options, the global agent, a progress listener.
  'got as called': async () => {
    const req = got(url, {
      method: 'GET',
      headers,
      searchParams: { numeroPage: '1' },
      timeout: { request: 30_000 },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: false,
      responseType: 'buffer',
    });
    req.on('downloadProgress', () => {});
    JSON.parse((await req).body.toString('utf8'));
  },
  'got tuned': async () => {
    const res = await got(url, {
      headers,
      searchParams: { numeroPage: '1' },
      agent: { http: keepAlive },
      timeout: { request: 30_000 },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: false,
      responseType: 'buffer',
    });
    JSON.parse(res.body.toString('utf8'));
  },
  'undici pool': async () => {
    const res = await pool.request({
      method: 'GET',
      path: '/v2/dossiers/etats?numeroPage=1',
      headers,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    JSON.parse(await res.body.text());
  },
  'opco-proxy client': async () => {
    await service.call(callContext());
  },
  'undici request': async () => {
    const res = await undiciRequest(`${url}?numeroPage=1`, { headers });
    JSON.parse(await res.body.text());
  },
};

async function cost(call) {
  let left = calls;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await call();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

for (const call of Object.values(clients)) await cost(call); // warm-up
const names = Object.keys(clients);
const rounds = [];
for (let round = 0; round < Number(values.rounds); round++) {
  const seen = {};
  for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)])
    seen[name] = await cost(clients[name]);
  rounds.push(seen);
}
console.log(JSON.stringify(rounds));
await pool.close();
await service.close();
process.exit(0);
