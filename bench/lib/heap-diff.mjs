#!/usr/bin/env node
// What grew between two heap snapshots of one process (bench/memory.mjs --snapshots): objects
// counted and their self sizes summed by type and constructor name (strings by their first 40
// characters), the largest growths first. Self sizes only: it says which objects there are more
// of, and a retainer path (DevTools) says who holds them.
// node bench/lib/heap-diff.mjs A.heapsnapshot B.heapsnapshot [--top 40] [--by name|string]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '40' }, by: { type: 'string', default: 'name' } },
  allowPositionals: true,
});
if (positionals.length !== 2)
  throw new Error('usage: heap-diff.mjs A.heapsnapshot B.heapsnapshot [--top N] [--by name|string]');

/** Map of "type name" to {count, bytes}. */
function tally(file) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const [T, N, S] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + T]];
    const name = strings[nodes[i + N]];
    const key =
      values.by === 'string' && (type === 'string' || type === 'concatenated string' || type === 'sliced string')
        ? `${type} ${JSON.stringify(name.slice(0, 40))}`
        : type === 'string' || type === 'concatenated string' || type === 'sliced string'
          ? type
          : `${type} ${name.slice(0, 60)}`;
    const g = groups.get(key) ?? { count: 0, bytes: 0 };
    g.count += 1;
    g.bytes += nodes[i + S];
    total += nodes[i + S];
    groups.set(key, g);
  }
  return { groups, total };
}

const [a, b] = positionals.map(tally);
const rows = [];
for (const key of new Set([...a.groups.keys(), ...b.groups.keys()])) {
  const x = a.groups.get(key) ?? { count: 0, bytes: 0 };
  const y = b.groups.get(key) ?? { count: 0, bytes: 0 };
  rows.push({ key, count: y.count - x.count, bytes: y.bytes - x.bytes, countB: y.count });
}
rows.sort((r, s) => s.bytes - r.bytes);
console.log(
  `heap (self sizes): ${(a.total / 1048576).toFixed(1)} MiB -> ${(b.total / 1048576).toFixed(1)} MiB, +${((b.total - a.total) / 1048576).toFixed(2)} MiB`,
);
console.log('   +bytes   +count   count    type name');
for (const r of rows.slice(0, Number(values.top))) {
  console.log(
    `${String(r.bytes).padStart(9)} ${String(r.count).padStart(8)} ${String(r.countB).padStart(7)}    ${r.key}`,
  );
}
