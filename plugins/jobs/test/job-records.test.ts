// Leases and schedules of job records: one holder at a time, retries not taken early,
// overdue jobs found for re-queueing.
import t from 'tap';
import { createEmbeddedStore } from '@opco-proxy/core';
import { JobRecords, type JobRecord } from '../src/job-records.js';

function job(id: string, changes: Partial<JobRecord> = {}): JobRecord {
  return { _id: id, tenant: 't', opcoId: 'o', type: 'post-facture', status: 'pending', retries: 0, createdAt: new Date(), startedAt: null, completedAt: null, steps: [], leaseOwner: null, leaseUntil: null, ...changes };
}

t.test('one lease at a time; a lapsed lease can be taken over', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const records = new JobRecords(store);
  await records.jobs.insertOne(job('a'));
  const claims = await Promise.all(['w1', 'w2', 'w3'].map((w) => records.claim('a', w, 100)));
  t.equal(claims.filter(Boolean).length, 1, 'one winner');
  await new Promise((r) => setTimeout(r, 150));
  t.ok(await records.claim('a', 'w9', 100), 'taken over after the lease lapsed');
  await t.rejects(records.update('a', 'w1', { retries: 5 }), { name: 'LeaseLost' }, 'the old holder cannot write');
});

t.test('a live lease cannot be claimed again, not even by its holder', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const records = new JobRecords(store);
  await records.jobs.insertOne(job('b'));
  t.ok(await records.claim('b', 'w1', 10_000));
  t.equal(await records.claim('b', 'w1', 10_000), null, 'a duplicate message must not start a second run');
  await records.release('b', 'w1');
  t.ok(await records.claim('b', 'w1', 10_000), 'free again once released');
});

t.test('a job waiting for its retry is not taken early, and finished jobs never', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const records = new JobRecords(store);
  await records.jobs.insertOne(job('later', { status: 'processing', nextAttemptAt: new Date(Date.now() + 60_000) }));
  await records.jobs.insertOne(job('done', { status: 'completed' }));
  t.equal(await records.claim('later', 'w', 1000), null);
  t.equal(await records.claim('done', 'w', 1000), null);
});

t.test('overdue finds jobs never taken, not fresh or leased ones', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const records = new JobRecords(store);
  const old = new Date(Date.now() - 120_000);
  await records.jobs.insertOne(job('stuck', { createdAt: old }));
  await records.jobs.insertOne(job('fresh'));
  await records.jobs.insertOne(job('leased', { createdAt: old, status: 'processing', leaseOwner: 'w', leaseUntil: new Date(Date.now() + 60_000) }));
  await records.jobs.insertOne(job('retry-due', { createdAt: old, status: 'processing', nextAttemptAt: old }));
  await records.jobs.insertOne(job('retry-later', { createdAt: old, status: 'processing', nextAttemptAt: new Date(Date.now() + 60_000) }));
  await records.jobs.insertOne(job('ended', { createdAt: old, status: 'failed' }));
  t.same((await records.overdue(60_000)).map((j) => j._id).sort(), ['retry-due', 'stuck']);
});

t.test('unnotified finds ended jobs that still owe their event, once the grace has passed', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const records = new JobRecords(store);
  const old = new Date(Date.now() - 120_000);
  await records.jobs.insertOne(job('owed', { status: 'completed', completedAt: old, notified: false }));
  await records.jobs.insertOne(job('just-ended', { status: 'failed', completedAt: new Date(), notified: false }));
  await records.jobs.insertOne(job('told', { status: 'completed', completedAt: old, notified: true }));
  await records.jobs.insertOne(job('running', { status: 'processing' }));
  t.same((await records.unnotified(60_000)).map((j) => j._id), ['owed']);
});
