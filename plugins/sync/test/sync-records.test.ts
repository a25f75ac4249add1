// Syncs and their batches in the store (SPEC 2.6, 3.2, D19, D20): one running sync per tenant
// and opcoId, cancel only while running, a finished sync no longer moves, progress only forward,
// batches planned once and claimed with their attempts counted, lost messages found again.
import t, { type Test } from 'tap';
import { createEmbeddedStore, ServiceError } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createSealer } from '@opco-proxy/core/application';
import { SyncRecords, toResource, type BatchRecord, type SyncRecord } from '../src/sync-records.js';

async function records(t: Test) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const kept = new SyncRecords(store, createSealer(Buffer.alloc(32, 3)), clock, 'w');
  await kept.prepare();
  const sync = (id: string, changes: Partial<SyncRecord> = {}): SyncRecord => ({
    _id: id,
    tenant: 't',
    opcoId: 'o',
    status: 'pending',
    minYear: null,
    enablePoller: false,
    apiKey: kept.sealKey(id, 'cfa-key-1'),
    phase: 'discovery',
    total: 0,
    discovered: 0,
    fetched: 0,
    progress: 0,
    batchesCompleted: 0,
    totalBatches: 0,
    estimatedEnd: null,
    error: null,
    startedAt: clock.date(),
    fetchStartedAt: null,
    completedAt: null,
    leaseOwner: null,
    leaseUntil: null,
    nextAttemptAt: clock.date(),
    ...changes,
  });
  const batch = (syncId: string, n: number): BatchRecord => ({
    _id: `${syncId}:${n}`,
    syncId,
    batch: n,
    numeros: [`${n}`],
    status: 'pending',
    attempts: 0,
    leaseOwner: null,
    leaseUntil: null,
    nextAttemptAt: clock.date(),
  });
  return { kept, clock, sync, batch };
}

t.test('D19: one running sync per tenant and opcoId; the conflict names the running one', async (t) => {
  const { kept, sync } = await records(t);
  await kept.insert(sync('s1'));
  await kept.lock('t', 'o', 's1');
  const err = await kept.lock('t', 'o', 's2').catch((e: unknown) => e);
  t.ok(err instanceof ServiceError);
  t.match(err, { code: 'CONFLICT', status: 409, extra: { syncId: 's1' } });
  await kept.lock('t', 'other-opco', 's3');
  await kept.lock('other-tenant', 'o', 's4');
  t.pass('other opcoIds and tenants are not held back');
  await kept.unlock({ _id: 's1', tenant: 't', opcoId: 'o' });
  await kept.lock('t', 'o', 's5');
  t.pass('taken again once unlocked');
});

t.test('a lock left by a sync that finished (a crash between two writes) is cleared and taken', async (t) => {
  const { kept, sync } = await records(t);
  await kept.insert(sync('old', { status: 'failed' }));
  await kept.lock('t', 'o', 'old');
  await kept.lock('t', 'o', 'new');
  await kept.insert(sync('new'));
  await kept.unlock({ _id: 'old', tenant: 't', opcoId: 'o' });
  await t.rejects(
    kept.lock('t', 'o', 'third'),
    { code: 'CONFLICT', extra: { syncId: 'new' } },
    'the new sync holds it: unlocking with the old id freed nothing',
  );
});

// startSync locks, then inserts its record: in between, another instance's lock() finds a lock
// whose holder is not in the store, takes it as stale, and both syncs run (D19 broken).
t.test('a lock whose sync is not stored yet is not taken as stale, until a start cannot take that long', async (t) => {
  const { kept, clock } = await records(t);
  await kept.lock('t', 'o', 'first');
  await t.rejects(kept.lock('t', 'o', 'second'), { code: 'CONFLICT' }, 'a racing start is refused');
  await clock.advance(61_000);
  await t.resolves(
    kept.lock('t', 'o', 'third'),
    'a crash between the lock and the record blocks the tenant a minute at most',
  );
  await t.rejects(kept.lock('t', 'o', 'fourth'), { code: 'CONFLICT' });
});

t.test('the key is sealed for its sync and read back', async (t) => {
  const { kept, sync } = await records(t);
  const record = sync('s1');
  t.notMatch(JSON.stringify(record.apiKey), 'cfa-key-1', 'never stored in clear');
  t.equal(kept.apiKeyOf(record), 'cfa-key-1');
  t.throws(() => kept.apiKeyOf({ ...record, _id: 's2' }), 'sealed for one sync only');
});

t.test('cancel: only a running sync of the same tenant', async (t) => {
  const { kept, sync, clock } = await records(t);
  await kept.insert(sync('s1'));
  await kept.insert(sync('done', { status: 'completed' }));
  t.equal(await kept.cancel('s1', 'another-tenant'), null);
  t.match(await kept.cancel('s1', 't'), { status: 'cancelled', completedAt: clock.date(), leaseOwner: null });
  t.equal(await kept.cancel('s1', 't'), null, 'not twice');
  t.equal(await kept.cancel('done', 't'), null, 'not once completed');
  t.equal(await kept.findForTenant('s1', 'another-tenant'), null, 'nor seen by another tenant');
});

t.test('a finished sync no longer moves; progress only goes forward', async (t) => {
  const { kept, sync } = await records(t);
  await kept.insert(sync('s1'));
  t.match(await kept.claimDiscovery('s1', 1000), { record: { status: 'processing' } }, 'discovery makes it processing');
  t.equal(await kept.claimDiscovery('s1', 1000), null, 'and is held by one worker');
  t.match(await kept.updateRunning('s1', { discovered: 5 }, { fetched: 2 }), { discovered: 5, fetched: 2 });
  t.match(await kept.updateRunning('s1', {}, { fetched: 3 }), { fetched: 5 }, '$inc adds');
  t.match(await kept.advance('s1', 0.7, 'later'), { progress: 0.7 });
  t.equal(await kept.advance('s1', 0.6, 'sooner'), null, 'a smaller progress is not written');
  t.equal((await kept.get('s1'))!.progress, 0.7);
  t.match(await kept.complete('s1', new Date(0)), { status: 'completed', progress: 1 });
  t.equal(await kept.updateRunning('s1', { status: 'failed' }), null, 'a completed sync is not failed afterwards');
  t.equal(await kept.complete('s1', new Date(0)), null, 'nor completed twice');
});

t.test('batches: planned once, claimed with their attempt counted, never while held or completed', async (t) => {
  const { kept, batch } = await records(t);
  await kept.planBatch(batch('s1', 1));
  await kept.planBatch({ ...batch('s1', 1), numeros: ['changed'] });
  const claimed = await kept.claimBatch('s1', 1, 1000);
  t.match(claimed, { record: { numeros: ['1'], attempts: 1 } }, 'a re-planned batch keeps its first plan');
  t.equal(await kept.claimBatch('s1', 1, 1000), null, 'held');
  await kept.batchLeases.release('s1:1', claimed!.token, { status: 'completed' });
  t.equal(await kept.claimBatch('s1', 1, 1000), null, 'completed');
});

t.test('lost messages: overdue discoveries and batches of processing syncs only', async (t) => {
  const { kept, sync, batch, clock } = await records(t);
  await kept.insert(sync('discovering'));
  await kept.insert(sync('fetching', { status: 'processing', phase: 'fetch' }));
  await kept.insert(sync('cancelled', { status: 'cancelled', phase: 'fetch' }));
  await kept.planBatch(batch('fetching', 1));
  await kept.planBatch(batch('cancelled', 1));
  t.same(await kept.overdueDiscoveries(new Date(clock.now() - 60_000)), [], 'not before the grace');
  t.same(await kept.overdueBatches(new Date(clock.now() - 60_000)), []);
  await clock.advance(61_000);
  t.same(
    (await kept.overdueDiscoveries(new Date(clock.now() - 60_000))).map((s) => s._id),
    ['discovering'],
  );
  t.same(
    (await kept.overdueBatches(new Date(clock.now() - 60_000))).map((b) => b._id),
    ['fetching:1'],
    "the cancelled sync's batch is left",
  );
});

t.test('toResource: SPEC 2.6 as the client sees it, progress to three decimals', async (t) => {
  const { sync } = await records(t);
  const resource = toResource(sync('s1', { progress: 0.123456, completedAt: new Date(0) }));
  t.same(Object.keys(resource).sort(), [
    'batchesCompleted',
    'completedAt',
    'discovered',
    'error',
    'estimatedEnd',
    'fetched',
    'opcoId',
    'progress',
    'startedAt',
    'status',
    'syncId',
    'total',
    'totalBatches',
  ]);
  t.match(resource, { syncId: 's1', progress: 0.123, completedAt: '1970-01-01T00:00:00.000Z' });
  t.notOk('apiKey' in resource || 'tenant' in resource, 'no key, no tenant');
});
