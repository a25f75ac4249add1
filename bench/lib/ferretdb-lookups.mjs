#!/usr/bin/env node
// What a command by `_id` costs on FerretDB against the collection's size (the cost of each of a
// job's store commands there; bench/RESULTS.md, 2026-11-26). Wall time per command, one at a
// time, on a FerretDB of its own on PostgreSQL (lib/ferretdb.mjs) or on `--mongodb-url`.
// Run after `npm ci`:  node bench/lib/ferretdb-lookups.mjs [--mongodb-url URL]
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { startFerretDb } from './ferretdb.mjs';

const { values: opts } = parseArgs({ options: { 'mongodb-url': { type: 'string' } } });
const ferret = await startFerretDb({ url: opts['mongodb-url'], label: 'bench_lookups' });
const client = await MongoClient.connect(ferret.url);
const db = client.db(`lookups_${process.pid}`);
const docs = db.collection('docs');
const body = 'x'.repeat(1500);
const TIMES = 50;
let stored = 0;
try {
  for (const size of [100, 1000, 5000, 20000]) {
    const batch = [];
    while (stored < size) batch.push({ _id: `doc-${stored}`, status: stored++ % 10 ? 'completed' : 'pending', body });
    for (let i = 0; i < batch.length; i += 1000) await docs.insertMany(batch.slice(i, i + 1000));
    const some = (i) => `doc-${(i * 37) % size}`;
    const row = [];
    for (const [label, command] of [
      ['findOne {_id}', (i) => docs.findOne({ _id: some(i) })],
      ['findOne {_id, status}', (i) => docs.findOne({ _id: some(i), status: 'completed' })],
      ['updateOne {_id}', (i) => docs.updateOne({ _id: some(i) }, { $set: { n: i } })],
      ['findOneAndUpdate {_id}', (i) => docs.findOneAndUpdate({ _id: some(i) }, { $set: { m: i } })],
      ['insertOne', (i) => docs.insertOne({ _id: `new-${size}-${i}`, body })],
    ]) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < TIMES; i++) await command(i);
      row.push(`${label} ${(Number(process.hrtime.bigint() - started) / 1e6 / TIMES).toFixed(2)}`);
    }
    console.log(`${String(size).padStart(6)} documents, ms per command: ${row.join(', ')}`);
  }
} finally {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
  await ferret.stop();
}
