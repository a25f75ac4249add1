#!/usr/bin/env node
// The embedded store's share of a job (issue 11, jobs): the store operations one single-step job
// makes on the embedded backend, run on the store alone, with no HTTP, queue or upstream around
// them, so a change to the store is measured without the noise of the whole service. Per job:
// insert, the lease claim (findOneAndUpdate by _id returning the record as it was), the ending
// write, the `notified` updateMany, the budget slot's claim, and the event's webhook lookup; every
// 1,000 jobs, the oldest unfinished job by status (the read /metrics makes once a second at most,
// so once per 1,000 jobs at the goal's rate). The collection
// keeps the ended jobs, as the store does for their retention (D17), and, as the jobs plugin
// sets it up on this backend, no index but `_id`.
// Each side runs in a child pinned to CPU 0 where the machine allows; the sides alternate.
// With --file the store keeps its datafiles in a temporary directory (each write appended to
// them before it is acknowledged), as a service configured with `store.path`.
// Run after `npm run build`:  node bench/embedded-store.mjs [--root DIR] [--rounds 5] [--jobs 5000] [--file] [--quick]
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PINNED, SERVICE_CPU } from './lib/processes.mjs';
import { printRatios } from './lib/rounds.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const { values: opts } = parseArgs({
  options: {
    root: { type: 'string' },
    rounds: { type: 'string' },
    jobs: { type: 'string' },
    quick: { type: 'boolean', default: process.env.BENCH_QUICK === '1' },
    child: { type: 'string' },
    file: { type: 'boolean', default: false },
  },
});
const jobs = Number(opts.jobs ?? (opts.quick ? 2000 : 5000));

if (opts.child) console.log(JSON.stringify(await runJobs(opts.child, jobs)));
else main();

function main() {
  const rounds = Number(opts.rounds ?? (opts.quick ? 3 : 5));
  const sides = { this: resolve(HERE, '..'), ...(opts.root && { other: resolve(opts.root) }) };
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? Object.entries(sides) : Object.entries(sides).reverse();
    const row = {};
    for (const [name, root] of order) {
      const args = [
        fileURLToPath(import.meta.url),
        '--child',
        root,
        '--jobs',
        String(jobs),
        ...(opts.file ? ['--file'] : []),
      ];
      const out = PINNED
        ? execFileSync('taskset', ['-c', SERVICE_CPU, process.execPath, ...args], { encoding: 'utf8' })
        : execFileSync(process.execPath, args, { encoding: 'utf8' });
      row[name] = JSON.parse(out);
    }
    results.push(row);
  }
  console.log(
    `embedded store${opts.file ? ' with datafiles' : ', in memory'}, the operations of ${jobs} single-step jobs (after ${jobs} ended ones kept), ${rounds} rounds${PINNED ? ', pinned to CPU ' + SERVICE_CPU : ''}`,
  );
  for (const [i, row] of results.entries()) {
    console.log(
      `  round ${i + 1}: ${Object.entries(row)
        .map(([name, r]) => `${name} ${r.cpuUsPerJob.toFixed(0)} µs CPU per job`)
        .join(', ')}`,
    );
  }
  if (sides.other)
    printRatios('ratio = this / other, same round', [
      { name: 'CPU per job', values: results.map((r) => r.this.cpuUsPerJob / r.other.cpuUsPerJob) },
    ]);
}

/** Jobs through a fresh in-memory store of the checkout at `root`; CPU time per job. */
async function runJobs(root, count) {
  const { createEmbeddedStore } = await import(resolve(root, 'core/dist/src/store/embedded-store.js'));
  const dir = opts.file ? mkdtempSync(join(tmpdir(), 'embedded-store-bench-')) : undefined;
  const store = await createEmbeddedStore(dir ? { path: dir } : {});
  const jobsCollection = store.collection('jobs');
  const slots = store.collection('upstream_budget');
  const webhooks = store.collection('webhooks');
  await slots.insertMany(
    Array.from({ length: 1000 }, (_, i) => ({ _id: `sandbox#${i}`, opcoId: 'sandbox', index: i, usedAt: new Date(0) })),
  );
  const sealed = randomBytes(600).toString('base64');
  const run = async (n, offset) => {
    for (let i = 0; i < n; i++) {
      const id = `job-${offset + i}`;
      const now = new Date();
      await jobsCollection.insertOne({
        _id: id,
        tenant: 'tenant-hash',
        opcoId: 'sandbox',
        type: 'createDossier',
        status: 'pending',
        retries: 0,
        createdAt: now,
        startedAt: null,
        completedAt: null,
        steps: [{ route: 'POST /dossiers', status: 'pending' }],
        requestId: randomBytes(8).toString('hex'),
        leaseOwner: null,
        leaseUntil: null,
        nextAttemptAt: now,
        inputs: { key: sealed.slice(0, 60), body: sealed },
      });
      const claimed = await jobsCollection.findOneAndUpdate(
        {
          $and: [
            { _id: id },
            { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
            { nextAttemptAt: { $lte: now } },
          ],
        },
        {
          $set: {
            status: 'processing',
            startedAt: now,
            leaseOwner: 'w:1',
            leaseUntil: new Date(now.getTime() + 30_000),
          },
        },
        { returnDocument: 'before' },
      );
      if (!claimed) throw new Error(`${id} was not claimed`);
      await slots.findOneAndUpdate(
        { _id: `sandbox#${(offset + i) % 1000}`, opcoId: 'sandbox', usedAt: { $lte: now } },
        { $set: { usedAt: now, holder: 'h' } },
      );
      await jobsCollection.findOneAndUpdate(
        { _id: id, leaseOwner: 'w:1' },
        {
          $set: {
            status: 'completed',
            completedAt: now,
            resultJson: '{"numeroDossier":"D1"}',
            notified: false,
            expiresAt: new Date(now.getTime() + 30 * 86_400_000),
            inputs: null,
            leaseOwner: null,
            leaseUntil: null,
          },
        },
      );
      await webhooks.find({ tenant: 'tenant-hash', active: true, events: 'job.completed' });
      await jobsCollection.updateMany({ _id: id, notified: false }, { $set: { notified: true } });
      if (i % 1000 === 0)
        for (const status of ['pending', 'processing'])
          await jobsCollection.find({ status }, { sort: { createdAt: 1 }, limit: 1 });
    }
  };
  await run(count, 0); // the retained ended jobs, and warm-up
  const before = process.cpuUsage();
  await run(count, count);
  const used = process.cpuUsage(before);
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { cpuUsPerJob: (used.user + used.system) / count };
}
