#!/usr/bin/env node
// `npm run bench:compare -- <git ref> [--only cached-get,jobs] [--rounds 3] [--quick] [--clean]`:
// what a change costs. Builds <ref> in a git worktree of its own (by commit under
// ~/.cache/opco-proxy/bench-refs, kept for the next comparison with that ref; `--clean` removes
// it at the end), then runs the same benchmarks against this checkout's build
// and the ref's, one process each time, alternating which goes first round by round. Each run
// measures the service against its own baseline (Koa, nginx, a one-insert server, a bare
// sender) in the same round, so machine drift cancels out; the figure here is, per round, this
// checkout's ratio to its baseline divided by the ref's (and the same for absolute rows), printed
// as min / median / max over the rounds. Above 1 means more of the row's figure than the ref:
// better for req/s and deliveries/s, worse for CPU, p99 and RSS.
// The service side only changes: the harness (load, baselines, upstream) is this checkout's.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatRatio } from './lib/rounds.mjs';

/** The figures issue 40 reads: reads cached and not, job acceptance alone and with the worker, webhook fan-out, memory. */
const DEFAULT_RUNS = ['cached-get', 'uncached-get', 'jobs:api', 'jobs', 'webhooks', 'memory'];
/** Each run as a script and the arguments that keep it to its part of a round (the rounds are this script's). */
const RUNS = {
  'cached-get': { script: 'cached-get', args: ['--rounds', '1'] },
  'uncached-get': { script: 'uncached-get', args: ['--rounds', '1'] },
  'jobs:api': { script: 'jobs', args: ['--rounds', '1', '--backends', 'embedded', '--role', 'api'] },
  jobs: { script: 'jobs', args: ['--rounds', '1', '--backends', 'embedded'] },
  webhooks: { script: 'webhooks', args: ['--rounds', '1'] },
  memory: { script: 'memory', args: ['--files', '1', '--jobs', '0', '--answers', '0'] },
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string' },
    rounds: { type: 'string' },
    quick: { type: 'boolean', default: false },
    clean: { type: 'boolean', default: false },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const quick = values.quick || process.env.BENCH_QUICK === '1';
const ref = positionals[0];
if (!ref) {
  console.error('usage: npm run bench:compare -- <git ref> [--only cached-get,jobs] [--rounds 3] [--quick] [--clean]');
  process.exit(2);
}
const runs = values.only ? values.only.split(',').map((name) => name.replace(/\.mjs$/, '')) : DEFAULT_RUNS;
for (const run of runs) if (!RUNS[run]) throw new Error(`--only: ${run} is not one of ${Object.keys(RUNS).join(', ')}`);
const rounds = Number(values.rounds ?? (quick ? 2 : 3));

function git(...args) {
  const run = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr.trim()}`);
  return run.stdout.trim();
}

function sh(command, args, cwd) {
  const run = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (exit ${run.status})`);
}

/** The ref's worktree, built once per commit: npm ci and npm run build as a clone would. */
function prepare(sha) {
  const dir = join(
    process.env.OPCO_PROXY_CACHE ?? join(homedir(), '.cache/opco-proxy'),
    'bench-refs',
    sha.slice(0, 12),
  );
  const built = join(dir, '.bench-built');
  git('worktree', 'prune');
  if (!existsSync(join(dir, '.git'))) {
    rmSync(dir, { recursive: true, force: true });
    git('worktree', 'add', '--detach', '--force', dir, sha);
  }
  if (!existsSync(built)) {
    console.log(`building ${ref} (${sha.slice(0, 12)}) in ${dir}`);
    sh('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    sh('npm', ['run', 'build', '--silent'], dir);
    writeFileSync(built, `${new Date().toISOString()}\n`);
  }
  return dir;
}

/** One run of a bench script with the service from `serviceRoot`; its ratio rows. */
async function runOnce(run, serviceRoot, label) {
  const { script, args } = RUNS[run];
  const rows = join(mkdtempSync(join(tmpdir(), 'bench-compare-')), 'rows.jsonl');
  writeFileSync(rows, '');
  console.log(`\n--- ${run}, ${label} ---`);
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bench', `${script}.mjs`), ...args, ...(quick ? ['--quick'] : [])],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        BENCH_SERVICE_ROOT: serviceRoot,
        BENCH_RATIOS_FILE: rows,
        ...(quick ? { BENCH_QUICK: '1' } : {}),
      },
    },
  );
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`bench/${script}.mjs ${args.join(' ')} exited ${code} (${label})`);
  return readFileSync(rows, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
const head = git('rev-parse', '--short=12', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const refDir = prepare(sha);
/** `${script}\t${title}\t${name}` -> this / ref, one value per round. */
const ratios = new Map();
let failure;
try {
  for (const run of runs) {
    for (let round = 0; round < rounds; round++) {
      const sides = [
        ['this', ROOT],
        ['ref', refDir],
      ];
      if (round % 2 === 1) sides.reverse();
      const seen = {};
      for (const [side, dir] of sides)
        seen[side] = await runOnce(
          run,
          dir,
          `${side === 'this' ? `this checkout (${head}${dirty ? ', modified' : ''})` : `${ref} (${sha.slice(0, 12)})`}, round ${round + 1} of ${rounds}`,
        );
      for (const row of seen.this) {
        const other = seen.ref.find((r) => r.title === row.title && r.name === row.name);
        if (!other) continue;
        const key = [run, row.title, row.name].join('\t');
        if (!ratios.has(key)) ratios.set(key, []);
        ratios.get(key).push(row.median / other.median);
      }
    }
  }
} catch (err) {
  // The figures of the runs that ended are still printed.
  failure = err;
} finally {
  if (values.clean) git('worktree', 'remove', '--force', refDir);
}

console.log(
  `\n=== bench:compare: this checkout (${head}${dirty ? ', modified' : ''}) / ${ref} (${sha.slice(0, 12)}), ${rounds} interleaved rounds${quick ? ', quick' : ''}, Node ${process.version} ===`,
);
console.log(
  "each row: (this checkout's figure) / (the ref's), both read against their own round's baseline; above 1 is more of the figure",
);
let lastTitle = '';
for (const [key, values_] of ratios) {
  const [script, title, name] = key.split('\t');
  if (`${script}${title}` !== lastTitle) console.log(`${script}: ${title}`);
  lastTitle = `${script}${title}`;
  console.log(`  ${name.padEnd(28)} ${formatRatio(values_)}`);
}
if (ratios.size === 0) console.log('no figure common to both sides');
if (failure) {
  console.error(`stopped early: ${failure.message}`);
  process.exitCode = 1;
}
