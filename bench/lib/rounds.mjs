// Interleaved rounds and their summary: each round runs every side once, the order turning
// round by round so drift on a shared machine hits every side alike; ratios are taken within
// a round and reported as min / median / max over the rounds.
import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

/** `--quick` or BENCH_QUICK=1: fewer, shorter rounds (what `npm run bench -- --quick` passes). */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

/** The script's own options, plus --quick. */
export function options(spec) {
  return parseArgs({ options: { ...spec, quick: { type: 'boolean', default: false } }, allowPositionals: false })
    .values;
}

/** Runs `rounds` rounds; `sides` maps a name to an async measurement; returns one record per round. */
export async function interleave(rounds, sides) {
  const names = Object.keys(sides);
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const shift = round % names.length;
    const order = [...names.slice(shift), ...names.slice(0, shift)];
    const seen = {};
    for (const name of order) seen[name] = await sides[name](round);
    results.push(seen);
  }
  return results;
}

export function summary(xs) {
  const sorted = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { min: NaN, median: NaN, max: NaN };
  return { min: sorted[0], median: sorted[Math.floor((sorted.length - 1) / 2)], max: sorted[sorted.length - 1] };
}

export function formatRatio(xs, digits = 2) {
  const { min, median, max } = summary(xs);
  return `min ${min.toFixed(digits)}  median ${median.toFixed(digits)}  max ${max.toFixed(digits)}`;
}

/** Appends rows to BENCH_RATIOS_FILE (set by bench/compare.mjs) as JSON lines; nothing without it. */
export function recordRatios(title, rows) {
  if (!process.env.BENCH_RATIOS_FILE) return;
  const script = basename(process.argv[1] ?? '', '.mjs');
  const lines = rows.map((row) =>
    JSON.stringify({ script, title, name: row.name, goal: row.goal, ...summary(row.values) }),
  );
  appendFileSync(process.env.BENCH_RATIOS_FILE, lines.map((line) => `${line}\n`).join(''));
}

/**
 * One line per ratio: name, min/median/max, and the goal it is read against. With
 * BENCH_RATIOS_FILE (bench/compare.mjs), each row is also appended to it as a JSON line.
 */
export function printRatios(title, rows) {
  recordRatios(title, rows);
  console.log(title);
  const width = Math.max(...rows.map((r) => r.name.length));
  for (const row of rows)
    console.log(
      `  ${row.name.padEnd(width)}  ${formatRatio(row.values, row.digits)}${row.goal ? `   (goal ${row.goal})` : ''}`,
    );
}

export const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
