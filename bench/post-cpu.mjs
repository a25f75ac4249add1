#!/usr/bin/env node
// CPU per small write request (issue 11: reading `_files` as the body arrives must not slow the
// bodies without files). POST /sandbox/factures, a 600-byte invoice, with an Idempotency-Key
// already reserved: the service reads, parses and validates the body, hashes it and finds the
// key taken (200 duplicate), so no job runs and the figure is the write path's own. The service
// is the real CLI (embedded store); this checkout against `--root DIR`'s build (another
// checkout), interleaved rounds, each side a fresh process (without --root, this checkout
// alone); CPU is the process's own time from /proc over the requests (bench/README.md).
// Run after `npm run build`:  node bench/post-cpu.mjs [--root DIR] [--rounds 5] [--requests 3000]
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { factureBody } from '@opco-proxy/e2e';
import { pinSelf, pinning } from './lib/processes.mjs';
import { QUICK, interleave, options, summary } from './lib/rounds.mjs';
import { startOpcoProxy } from './lib/service.mjs';

const args = options({ root: { type: 'string' }, rounds: { type: 'string' }, requests: { type: 'string' } });
const rounds = Number(args.rounds ?? (QUICK ? 3 : 5));
const requests = Number(args.requests ?? (QUICK ? 1000 : 3000));
pinSelf();

const sandbox = await startSandbox();
const body = JSON.stringify(factureBody(sandbox.dataset.dossiers[0].numeroInterne));

async function measure(cli) {
  const service = await startOpcoProxy({
    upstreamUrl: sandbox.url,
    config: { logLevel: 'warn' },
    rateLimit: { limit: 1000, windowMs: 1000 },
    cli,
  });
  const pool = new Pool(service.url, { connections: 8 });
  try {
    const headers = { ...service.headers, 'content-type': 'application/json', 'idempotency-key': 'bench-post-cpu' };
    const send = async () => {
      const answer = await pool.request({ method: 'POST', path: '/sandbox/factures', headers, body });
      await answer.body.text();
      return answer.statusCode;
    };
    if ((await send()) !== 202) throw new Error('the first request did not create the job');
    for (let i = 0; i < 300; i++) await send(); // warm-up
    const before = service.cpuSeconds();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < requests)
          if ((await send()) !== 200) throw new Error('a request was not answered 200 duplicate');
      }),
    );
    return ((service.cpuSeconds() - before) / requests) * 1e6;
  } finally {
    await pool.close();
    await service.stop();
  }
}

const sides = { here: () => measure(undefined) };
if (args.root) sides.other = () => measure(join(resolve(args.root), 'core/dist/src/cli.js'));
const results = await interleave(rounds, sides);
await sandbox.close();
console.log(`CPU per small POST (duplicate Idempotency-Key, ${requests} requests, 8 in flight), ${pinning()}`);
console.log(`  this checkout, µs/request:  ${results.map((r) => r.here.toFixed(0)).join('  ')}`);
if (args.root) {
  const s = summary(results.map((r) => r.here / r.other));
  console.log(`  ${args.root}, µs/request:  ${results.map((r) => r.other.toFixed(0)).join('  ')}`);
  console.log(`  ratio this / other: min ${s.min.toFixed(2)}  median ${s.median.toFixed(2)}  max ${s.max.toFixed(2)}`);
}
process.exit(0);
