// FerretDB v1 on PostgreSQL runs each update (findAndModify, update) on two connections of its
// PostgreSQL pool at once; as many updates in flight as the pool has connections deadlock it for
// good (`node bench/jobs.mjs --prefetch 32` hung for more than 10 minutes). The MongoDB store
// bounds its updates in flight on FerretDB (drivers/mongodb/src/update-slots.ts). Played on a
// FerretDB of this test's own with a pool of 9 connections: the bound (8) is under it, and the
// load here (dozens of updates at once) is far over it.
import t from 'tap';
import type { DomainEvent } from '@opco-proxy/core';
import { createStore } from '@opco-proxy/driver-mongodb';
import {
  dossierBody,
  eventually,
  privateFerretDbSkip,
  realBackendsSkip,
  startPrivateFerretDb,
  startService,
} from '../src/index.js';

const POOL = 9;
const skip = realBackendsSkip() || privateFerretDbSkip();

/** `promise`, or a failure once `ms` have passed: a deadlocked server never answers. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms (FerretDB deadlocked?)`)), ms)),
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

t.test('60 updates at once on a pool of 9 connections all end', { skip }, async (t) => {
  const ferret = await startPrivateFerretDb('pool_store', { poolMaxConns: POOL });
  const store = await createStore({ url: ferret.url, database: 'pool_store' }).catch(async (err) => {
    await ferret.close();
    throw err;
  });
  // A client with commands stuck on a deadlocked server would not close: FerretDB's exit ends them.
  t.teardown(async () => {
    await ferret.close();
    await store.close();
  });
  const docs = store.collection<{ _id: string; n: number }>('docs');
  await docs.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}`, n: 0 })));
  const updates = [
    ...Array.from({ length: 30 }, (_, i) => docs.findOneAndUpdate({ _id: `d${i}` }, { $inc: { n: 1 } })),
    ...Array.from({ length: 30 }, (_, i) => docs.updateMany({ _id: `d${i}` }, { $inc: { n: 1 } })),
  ];
  await within(20_000, '60 concurrent updates', Promise.all(updates));
  const after = await within(5000, 'a read after them', docs.find({}));
  t.same(
    after.map((doc) => doc.n),
    Array(30).fill(2),
    'every update applied once',
  );
});

t.test('32 jobs in flight per worker (jobs.prefetch) on a pool of 9 connections all complete', { skip }, async (t) => {
  const ferret = await startPrivateFerretDb('pool_jobs', { poolMaxConns: POOL });
  const id = `pool_jobs_${Date.now()}`;
  const events: DomainEvent[] = [];
  const service = await startService({
    events,
    // The sandbox profile's 60 calls a minute would hold the last 20 jobs for a minute.
    opco: { rateLimit: { limit: 1000, windowMs: 1000 } },
    config: {
      store: { type: 'mongodb', url: ferret.url, database: id },
      queue: { type: 'rabbitmq', url: process.env.RABBITMQ_URL!, prefix: id },
      jobs: { prefetch: 32 },
    },
  }).catch(async (err) => {
    await ferret.close();
    throw err;
  });
  // A service whose store deadlocked would not stop: FerretDB goes first then.
  t.teardown(async () => {
    if (!t.passing()) await ferret.close();
    await service.close();
    await ferret.close();
  });
  const JOBS = 80;
  const replies = await within(
    30_000,
    `${JOBS} submissions`,
    Promise.all(
      Array.from({ length: JOBS }, () => service.request('POST', '/sandbox/dossiers', { body: dossierBody() })),
    ),
  );
  t.same(
    replies.map((reply) => reply.status),
    Array(JOBS).fill(202),
    'every job accepted',
  );
  const completed = () => events.filter((event) => event.type === 'job.completed').length;
  await eventually(
    () => completed() >= JOBS,
    () => `${JOBS} jobs to complete (${completed()} did)`,
    45_000,
  );
  t.equal(completed(), JOBS, 'each job completed once');
});
