#!/usr/bin/env node
// `npm run bench [-- --quick]`: every top-level bench/*.mjs (BENCH_QUICK=1 in their environment
// when quick), one after the other (they pin the
// same cores), each within its share of a total time limit. Exits 1 when a script failed or ran
// out of time; a script exits non-zero only on errors, never on a timing.
//   node bench/lib/run-all.mjs [--quick] [--total-minutes 30] [--only cached-get,memory]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'total-minutes': { type: 'string' },
    only: { type: 'string' },
  },
});
const quick = values.quick || process.env.BENCH_QUICK === '1';
const dir = fileURLToPath(new URL('..', import.meta.url));
const only = values.only?.split(',').map((name) => name.replace(/\.mjs$/, ''));
// compare.mjs runs these scripts itself, against a ref (npm run bench:compare).
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'compare.mjs' && (!only || only.includes(f.replace(/\.mjs$/, ''))))
  .sort();
const totalMs = Number(values['total-minutes'] ?? (quick ? 12 : 45)) * 60_000;
const started = Date.now();
const outcomes = [];
for (const [i, script] of scripts.entries()) {
  // What is left, shared among the scripts still to run.
  const budgetMs = (totalMs - (Date.now() - started)) / (scripts.length - i);
  console.log(`\n=== ${script}${quick ? ' --quick' : ''} (at most ${(budgetMs / 60_000).toFixed(1)} min) ===`);
  // Quick runs are asked for through the environment, which a script that knows no --quick ignores.
  const child = spawn(process.execPath, [join(dir, script)], {
    stdio: 'inherit',
    env: { ...process.env, ...(quick ? { BENCH_QUICK: '1' } : {}) },
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), Math.max(budgetMs, 30_000));
  const [code, signal] = await once(child, 'exit');
  clearTimeout(timer);
  outcomes.push({ script, ok: code === 0, how: signal ? `stopped (${signal}): over its time` : `exit ${code}` });
}
console.log(`\n=== summary (${((Date.now() - started) / 60_000).toFixed(1)} min) ===`);
for (const o of outcomes) console.log(`  ${o.ok ? 'ok  ' : 'FAIL'} ${o.script} (${o.how})`);
process.exit(outcomes.every((o) => o.ok) ? 0 : 1);
