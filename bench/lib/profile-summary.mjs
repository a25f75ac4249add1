#!/usr/bin/env node
// Top self-time files of V8 CPU profiles (`node --cpu-prof`): the share of busy samples (idle
// left out) whose innermost frame is in each file, node_modules folded to their package. Several profiles of one
// kind are summed.   node bench/lib/profile-summary.mjs [--top 15] FILE.cpuprofile...
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

export function selfTimeByFile(profiles) {
  const totals = new Map();
  let all = 0;
  for (const profile of profiles) {
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const deltas = profile.timeDeltas;
    for (let i = 0; i < profile.samples.length; i++) {
      const node = nodes.get(profile.samples[i]);
      const us = deltas[i] ?? 0;
      const key = fileOf(node.callFrame);
      // Idle time is the rest of the run (other sides' rounds, set-up): shares are of busy time.
      if (key === '(idle)') continue;
      all += us;
      totals.set(key, (totals.get(key) ?? 0) + us);
    }
  }
  return [...totals.entries()].map(([file, us]) => ({ file, share: us / all })).sort((a, b) => b.share - a.share);
}

/** Prints the top self-time files of every profile written into `dir` (a benchmark's --cpu-prof). */
export function printProfiles(dir, title = 'top self time of the service', top = 15) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  console.log(`${title} (${files.length} profile(s) in ${dir}):`);
  for (const row of selfTimeByFile(files).slice(0, top))
    console.log(`  ${(row.share * 100).toFixed(1).padStart(5)} %  ${row.file}`);
}

function fileOf({ url, functionName }) {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return `npm:${modules[1]}`;
  if (url.startsWith('node:')) return url;
  const repo = /\/(core|plugins\/[^/]+|adapters\/[^/]+|schemas)\/dist\/(.*)$/.exec(url);
  return repo ? `${repo[1]}/${repo[2].replace(/\.js$/, '.ts')}` : url;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '15' } },
  });
  const rows = selfTimeByFile(positionals.map((f) => JSON.parse(readFileSync(f, 'utf8'))));
  for (const row of rows.slice(0, Number(values.top)))
    console.log(`${(row.share * 100).toFixed(1).padStart(5)} %  ${row.file}`);
}
