// The sync process (SPEC 3.2, 4.14, D19, D20) on a kernel with the sync plugin, in front of the
// sandbox: discovery of every page, batches of the profile's size, progress and events; a batch
// answered 503 waits for its backoff on the clock and is tried 3 times at most; an unusable answer
// or a failed discovery fails the sync at once; a cancel stops the batches still to come.
import t from 'tap';
import { MINUTE, PATHS, startSyncService, type SyncService } from './fixtures/sync-service.js';

async function start(service: SyncService, body: Record<string, unknown> = {}): Promise<string> {
  const accepted = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox', ...body } });
  if (accepted.status !== 202) throw new Error(`sync not started: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return accepted.body.syncId;
}

const syncOf = async (service: SyncService, syncId: string) => (await service.send('GET', `/sync/${syncId}`)).body;

t.test('a full sync: every page discovered, batches of 50, counts, events in order', async (t) => {
  const service = await startSyncService(t, { pageSize: 40 });
  const syncId = await start(service);
  await service.emitted('sync.completed', { syncId });
  t.match(await syncOf(service, syncId), {
    status: 'completed',
    total: 120,
    discovered: 120,
    fetched: 120,
    progress: 1,
    batchesCompleted: 3,
    totalBatches: 3,
    error: null,
  });
  t.same(
    service.calls(PATHS.etats).map((r) => r.query.numeroPage),
    ['1', '2', '3'],
    '120 dossiers in pages of 40',
  );
  const batches = service.calls(PATHS.liste).map((r) => r.query.numerosInternes.split(','));
  t.same(batches.map((b) => b.length).sort(), [20, 50, 50]);
  t.equal(new Set(batches.flat()).size, 120, 'every dossier fetched once');
  const mine = service.events.filter((e) => e.data.syncId === syncId);
  t.same(mine[0].type, 'sync.started');
  t.same(mine[0].data, { syncId, total: 120 });
  t.same(mine.at(-1)!.type, 'sync.completed', 'sync.completed comes last');
  const batchEvents = mine.filter((e) => e.type === 'sync.batch');
  t.same(batchEvents.map((e) => e.data.batch).sort(), [1, 2, 3]);
  t.equal(
    batchEvents.reduce((n, e) => n + (e.data.dossiers as unknown[]).length, 0),
    120,
    'the events carry the dossiers',
  );
  t.ok(
    service.calls(PATHS.etats).every((r) => r.headers['x-api-key'] === 'cfa-key-of-sync-tests'),
    "with the tenant's key",
  );
});

t.test('minYear: discovery reads each year from minYear to this year', async (t) => {
  const service = await startSyncService(t, { dossierCount: 30 });
  const year = service.clock.date().getUTCFullYear();
  const syncId = await start(service, { minYear: year - 2 });
  await service.emitted('sync.completed', { syncId });
  t.same(
    service.calls(PATHS.etats).map((r) => r.query.anneeDossier),
    [year - 2, year - 1, year].map(String),
  );
});

t.test('a batch answered 503 is tried again after its backoff, on the clock', async (t) => {
  const service = await startSyncService(t);
  service.sandbox.faults.add({ route: `GET ${PATHS.liste}`, times: 1, status: 503 });
  const syncId = await start(service);
  await service.until(async () => (await syncOf(service, syncId)).batchesCompleted === 2, 'the two other batches');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(service.calls(PATHS.liste).length, 3, 'not tried again before the clock moves');
  t.equal((await syncOf(service, syncId)).status, 'processing');
  await service.until(() => service.events.find((e) => e.type === 'sync.completed'), 'the retried batch', MINUTE);
  t.equal(service.calls(PATHS.liste).length, 4, 'one more call');
  t.match(await syncOf(service, syncId), { status: 'completed', fetched: 120 });
});

t.test('a batch that fails 3 times fails the sync, and the next sync may start', async (t) => {
  const service = await startSyncService(t, { dossierCount: 30 });
  service.sandbox.faults.add({ route: `GET ${PATHS.liste}`, status: 503 });
  const syncId = await start(service);
  const failed = await service.until(
    () => service.events.find((e) => e.type === 'sync.failed'),
    'the sync to fail',
    MINUTE,
  );
  t.match(failed.data, { syncId, error: /^batch 1 failed after 3 attempt\(s\)/ });
  t.equal(service.calls(PATHS.liste).length, 3, 'SPEC 8: three attempts');
  t.match(await syncOf(service, syncId), { status: 'failed', error: /batch 1/, completedAt: String });
  service.sandbox.faults.clear();
  t.equal(
    (await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } })).status,
    202,
    'the lock was freed',
  );
});

t.test('an unusable answer fails the sync without a retry', async (t) => {
  const service = await startSyncService(t, { dossierCount: 30 });
  service.sandbox.faults.add({ route: `GET ${PATHS.liste}`, garbage: true });
  const syncId = await start(service);
  await service.emitted('sync.failed', { syncId });
  t.equal(service.calls(PATHS.liste).length, 1);
});

t.test('a discovery that fails fails the sync', async (t) => {
  const service = await startSyncService(t);
  service.sandbox.faults.add({ route: `GET ${PATHS.etats}`, status: 500 });
  const syncId = await start(service);
  const failed = await service.emitted('sync.failed', { syncId });
  t.match(failed.data.error, /^discovery failed: /);
  t.match(await syncOf(service, syncId), { status: 'failed', totalBatches: 0 });
  t.equal(service.calls(PATHS.liste).length, 0);
});

t.test('a sync cancelled while a batch waits for its retry fetches nothing more', async (t) => {
  const service = await startSyncService(t);
  service.sandbox.faults.add({ route: `GET ${PATHS.liste}`, times: 1, status: 503 });
  const syncId = await start(service);
  await service.until(async () => (await syncOf(service, syncId)).batchesCompleted === 2, 'the two other batches');
  const cancelled = await service.send('DELETE', `/sync/${syncId}`);
  t.same(cancelled, { status: 200, body: { syncId, status: 'cancelled' } });
  await service.emitted('sync.cancelled', { syncId });
  for (let i = 0; i < 3; i++) await service.clock.advance(MINUTE);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(service.calls(PATHS.liste).length, 3, 'the batch waiting for its retry was not fetched');
  t.match(await syncOf(service, syncId), { status: 'cancelled', batchesCompleted: 2 });
  t.notOk(service.events.some((e) => e.data.syncId === syncId && e.type === 'sync.completed'));
});
