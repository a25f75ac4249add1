// Job records on the durable-work kit: only unfinished jobs are claimed, ended jobs that owe
// their event are found, and what the upstream answered comes back as the spec shows it.
import t from 'tap';
import { createEmbeddedStore } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { JobRecords, toResource, type JobRecord } from '../src/job-records.js';

function job(clock: TestClock, id: string, changes: Partial<JobRecord> = {}): JobRecord {
  return {
    _id: id,
    tenant: 't',
    opcoId: 'o',
    type: 'post-facture',
    status: 'pending',
    retries: 0,
    createdAt: clock.date(),
    startedAt: null,
    completedAt: null,
    steps: [],
    leaseOwner: null,
    leaseUntil: null,
    nextAttemptAt: clock.date(),
    ...changes,
  };
}

t.test('only unfinished jobs are claimed', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock();
  const records = new JobRecords(store, clock, 'w');
  await records.insert(job(clock, 'done', { status: 'completed' }));
  await records.insert(job(clock, 'open'));
  t.equal(await records.claim('done', 1000), null);
  const claimed = await records.claim('open', 1000);
  t.equal(claimed!.record.status, 'processing', 'claimed jobs are processing');
});

t.test('unnotified finds ended jobs that still owe their event, once the grace has passed', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock();
  const records = new JobRecords(store, clock, 'w');
  const old = new Date(clock.now() - 120_000);
  await records.insert(job(clock, 'owed', { status: 'completed', completedAt: old, notified: false }));
  await records.insert(job(clock, 'just-ended', { status: 'failed', completedAt: clock.date(), notified: false }));
  await records.insert(job(clock, 'told', { status: 'completed', completedAt: old, notified: true }));
  await records.insert(job(clock, 'running', { status: 'processing' }));
  t.same(
    (await records.unnotified(new Date(clock.now() - 60_000))).map((j) => j._id),
    ['owed'],
  );
  await records.markNotified('owed');
  t.same(await records.unnotified(new Date(clock.now() - 60_000)), []);
});

t.test('oldestUnfinished is the oldest pending or processing job, ended ones left out', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock();
  const records = new JobRecords(store, clock, 'w');
  t.equal(await records.oldestUnfinished(), null, 'none when there is no job');
  const base = clock.now();
  const at = (ago: number) => new Date(base - ago);
  await records.insert(job(clock, 'ended-long-ago', { status: 'completed', createdAt: at(90_000) }));
  await records.insert(job(clock, 'failed-long-ago', { status: 'failed', createdAt: at(80_000) }));
  await records.insert(job(clock, 'pending-new', { createdAt: at(1_000) }));
  t.same(await records.oldestUnfinished(), at(1_000), 'a pending job alone');
  await records.insert(job(clock, 'running-old', { status: 'processing', createdAt: at(30_000) }));
  t.same(await records.oldestUnfinished(), at(30_000), 'a processing job older than every pending one');
  await records.insert(job(clock, 'pending-older', { createdAt: at(40_000) }));
  t.same(await records.oldestUnfinished(), at(40_000), 'a pending job older than the processing one');
});

t.test('upstream answers are kept as text and shown as JSON', async (t) => {
  const clock = new TestClock();
  const resource = toResource(
    job(clock, 'x', {
      status: 'failed',
      error: { message: 'refused', code: 'UPSTREAM_ERROR', upstreamJson: '{"$where":{"a.b":[1]}}' },
    }),
  );
  t.same(
    resource.error,
    { message: 'refused', code: 'UPSTREAM_ERROR', upstream: { $where: { 'a.b': [1] } } },
    'keys a document store refuses survive',
  );
  t.same(toResource(job(clock, 'y', { status: 'completed', resultJson: '{"numeroInterne":"D-1"}' })).result, {
    numeroInterne: 'D-1',
  });
});
