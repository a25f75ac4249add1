#!/usr/bin/env node
// CPU per client read refused because the upstream budget is spent (429 RATE_LIMITED): a client
// retrying against a spent budget must not cost the service more than a read it serves, nor more
// as the budget has more slots. Per round and side, a fresh service (the real CLI, embedded
// store) with uncached reads and a budget of `--slots` calls per 10 minutes: the budget is spent
// with that many reads, then `--requests` reads, 8 in flight, must all be refused; CPU is the
// process's own time from /proc over them (bench/README.md). This checkout against `--root
// DIR`'s build (another checkout) when given, interleaved rounds.
// Run after `npm run build`:  node bench/spent-budget.mjs [--root DIR] [--rounds 3] [--requests 3000] [--slots 60,1000]
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { pinSelf, pinning } from './lib/processes.mjs';
import { QUICK, interleave, options, summary } from './lib/rounds.mjs';
import { recordUpstream, startFixedUpstream, startOpcoProxy } from './lib/service.mjs';

const args = options({
  root: { type: 'string' },
  rounds: { type: 'string' },
  requests: { type: 'string' },
  slots: { type: 'string' },
});
const rounds = Number(args.rounds ?? 3);
const requests = Number(args.requests ?? (QUICK ? 1000 : 3000));
const budgets = (args.slots ?? '60,1000').split(',').map(Number);
pinSelf();

const upstream = await startFixedUpstream(await recordUpstream());

async function refusalCost(cli, limit) {
  const service = await startOpcoProxy({
    upstreamUrl: upstream.url,
    cacheTtlS: 0,
    rateLimit: { limit, windowMs: 600_000 },
    config: { logLevel: 'warn' },
    cli,
  });
  const pool = new Pool(service.url, { connections: 8 });
  try {
    const read = async () => {
      const answer = await pool.request({ method: 'GET', path: '/sandbox/dossiers/etats', headers: service.headers });
      await answer.body.text();
      return answer.statusCode;
    };
    const inFlight = async (count, status) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let code; next++ < count;)
            if ((code = await read()) !== status) throw new Error(`a read was answered ${code}, not ${status}`);
        }),
      );
    };
    await inFlight(limit, 200);
    await inFlight(1500, 429); // warm-up: the JIT, whatever the budget spent first
    const before = service.cpuSeconds();
    await inFlight(requests, 429);
    return ((service.cpuSeconds() - before) / requests) * 1e6;
  } finally {
    await pool.close();
    await service.stop();
  }
}

const sides = {};
for (const limit of budgets) {
  sides[`here ${limit}`] = () => refusalCost(undefined, limit);
  if (args.root) sides[`other ${limit}`] = () => refusalCost(join(resolve(args.root), 'core/dist/src/cli.js'), limit);
}
const results = await interleave(rounds, sides);
await upstream.stop();

const row = (label, values) => {
  const s = summary(values);
  return `  ${label.padEnd(34)} min ${s.min.toFixed(2)}  median ${s.median.toFixed(2)}  max ${s.max.toFixed(2)}`;
};
console.log(`CPU per read refused with a spent budget (${requests} reads, 8 in flight), ${pinning()}`);
for (const side of Object.keys(sides))
  console.log(`  ${side} slots, µs/refusal: ${results.map((r) => r[side].toFixed(0)).join('  ')}`);
const [few, many] = [budgets[0], budgets.at(-1)];
if (few !== many)
  console.log(
    row(
      `${many} slots / ${few} slots, this`,
      results.map((r) => r[`here ${many}`] / r[`here ${few}`]),
    ),
  );
if (args.root)
  for (const limit of budgets)
    console.log(
      row(
        `this / other, ${limit} slots`,
        results.map((r) => r[`here ${limit}`] / r[`other ${limit}`]),
      ),
    );
process.exit(0);
