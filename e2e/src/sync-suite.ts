/**
 * SPEC 2.6, 3.2, 4.14, D19, D22: a sync of a few hundred dossiers, its progress and events,
 * batches of at most the profile's batch size, minYear, 409, cancel, DELETE of a finished sync,
 * tenant isolation; in front of either upstream shape (sync.test.ts, classic-sync.test.ts).
 */
import type { Test } from 'tap';
import type { DomainEvent } from '@opco-proxy/core';
import { startService, KEY_A, KEY_B } from './harness.js';
import { emitted } from './eventually.js';
import { watchSync } from './sync-client.js';
import { COMMON, type UpstreamShape } from './upstream-shapes.js';

export async function syncSuite(t: Test, shape: UpstreamShape = COMMON): Promise<void> {
  const events: DomainEvent[] = [];
  const service = await startService({
    opcoId: shape.opcoId,
    opco: { adapter: shape.adapter, rateLimit: shape.rateLimit },
    sandbox: { shape: shape.sandbox, dossierCount: 320, pageSize: 40 },
    events,
  });
  const opcoId = shape.opcoId;
  /** 320 dossiers in batches of the profile's size (50 common, 20 classic). */
  const batches = Math.ceil(320 / shape.batchSize);
  t.teardown(() => service.close());
  const { sandbox } = service;
  const listeCalls = () => sandbox.received.filter((r) => r.method === 'GET' && r.path === shape.paths.liste);
  const etatsCalls = () => sandbox.received.filter((r) => r.path === shape.paths.etats);
  /** Exactly the liste route: its classic path is a prefix of the etats path. */
  const listeFault = `GET ${shape.paths.liste}$`;

  t.test(`a full sync: progress, counts, events, batches of at most ${shape.batchSize}`, async (t) => {
    sandbox.resetStats();
    const accepted = await service.request('POST', '/sync/dossiers', { body: { opcoId } });
    t.equal(accepted.status, 202, accepted.text);
    t.equal(accepted.body.status, 'pending');
    t.equal(accepted.body.statusUrl, `/sync/${accepted.body.syncId}`);
    const { sync, seen } = await watchSync(service, accepted.body.syncId);
    t.equal(sync.status, 'completed');
    t.match(sync, {
      opcoId,
      total: 320,
      discovered: 320,
      fetched: 320,
      progress: 1,
      batchesCompleted: batches,
      totalBatches: batches,
      error: null,
    });
    t.ok(sync.completedAt && sync.estimatedEnd && sync.startedAt);
    const progress = seen.map((s) => s.progress);
    t.same(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress never goes back',
    );
    t.ok(
      seen.filter((s) => s.batchesCompleted === 0).every((s) => s.progress <= 0.5),
      'discovery stays within 0 to 0.5',
    );
    t.equal(etatsCalls().length, 8, 'every etats page read (320 / 40)');
    t.same(
      etatsCalls().map((r) => r.query[shape.query.page]),
      [1, 2, 3, 4, 5, 6, 7, 8].map(shape.page),
      "pages in the upstream's numbering",
    );
    const requested = listeCalls().map((r) => r.query[shape.query.numeros].split(','));
    t.equal(requested.length, batches);
    t.ok(
      requested.every((numbers) => numbers.length <= shape.batchSize),
      `at most ${shape.batchSize} numbers per liste call`,
    );
    t.equal(new Set(requested.flat()).size, 320, 'every dossier fetched once');

    await emitted(events, 'sync.completed', { syncId: sync.syncId });
    const mine = events.filter((e) => (e.data as any).syncId === sync.syncId);
    t.same(mine.find((e) => e.type === 'sync.started')!.data, { syncId: sync.syncId, total: 320 });
    const batchEvents = mine.filter((e) => e.type === 'sync.batch');
    t.same(
      batchEvents.map((e) => e.data.batch).sort((a: any, b: any) => a - b),
      Array.from({ length: batches }, (_, i) => i + 1),
    );
    t.equal(
      batchEvents.reduce((n, e) => n + (e.data.dossiers as unknown[]).length, 0),
      320,
      'sync.batch carries the dossiers',
    );
    t.ok(batchEvents.every((e) => e.data.totalBatches === batches));
    const completed = mine.find((e) => e.type === 'sync.completed')!;
    t.equal(completed.data.total, 320);
    t.type(completed.data.durationMs, 'number');
    t.equal(mine.indexOf(completed), mine.length - 1, 'sync.completed comes last');
    const dossier = (batchEvents[0].data.dossiers as any[])[0];
    t.ok(dossier.cerfa && dossier.numeroInterne, 'full dossier records');
    t.equal(dossier.status, 'success', "in the SPEC's shape");
    t.equal(
      dossier.cerfa.apprenti.dateNaissance,
      sandbox.dataset.dossier(dossier.numeroInterne)!.cerfa.apprenti.dateNaissance,
      'dates as YYYY-MM-DD',
    );
    t.match(
      (await service.get('/metrics', { key: null })).text,
      /opco_proxy_syncs_ended_total\{status="completed"\} [1-9]/,
    );
  });

  t.test('minYear reads only those years', async (t) => {
    sandbox.resetStats();
    const accepted = await service.request('POST', '/sync/dossiers', { key: KEY_B, body: { opcoId, minYear: 2024 } });
    t.equal(accepted.status, 202);
    const { sync } = await watchSync(service, accepted.body.syncId, { key: KEY_B });
    const expected = sandbox.dataset.dossiers.filter((d: any) => d.anneeDossier >= 2024).length;
    t.ok(expected > 0 && expected < 320);
    t.equal(sync.total, expected);
    t.equal(sync.fetched, expected);
    const years = new Set(etatsCalls().map((r) => r.query[shape.query.year]));
    t.notOk(years.has(undefined as never), 'always filtered by year');
    t.ok([...years].every((year) => Number(year) >= 2024));
  });

  t.test('body rules: 400 for bad minYear, missing or unknown opcoId', async (t) => {
    for (const body of [
      {},
      { opcoId, minYear: 2017 },
      { opcoId, minYear: 2018.5 },
      { opcoId, enablePoller: 'yes' },
      { opcoId: 'nowhere' },
    ]) {
      const reply = await service.request('POST', '/sync/dossiers', { key: 'rules-tenant-key', body });
      t.equal(reply.status, 400, JSON.stringify(body));
      t.equal(reply.body.code, 'VALIDATION_ERROR');
    }
  });

  t.test('a second sync while one runs gives 409 with its syncId; cancel stops it promptly', async (t) => {
    const tenant = 'cancel-tenant-key';
    sandbox.faults.add({ route: listeFault, latencyMs: 400 });
    t.teardown(() => sandbox.faults.clear());
    const first = await service.request('POST', '/sync/dossiers', { key: tenant, body: { opcoId } });
    const second = await service.request('POST', '/sync/dossiers', { key: tenant, body: { opcoId } });
    t.equal(second.status, 409);
    t.equal(second.body.code, 'CONFLICT');
    t.equal(second.body.syncId, first.body.syncId);
    await watchSync(service, first.body.syncId, { key: tenant, until: (s) => s.batchesCompleted >= 1 });
    const cancelled = await service.request('DELETE', `/sync/${first.body.syncId}`, { key: tenant });
    t.same(cancelled.body, { syncId: first.body.syncId, status: 'cancelled' });
    const callsAtCancel = listeCalls().length;
    await new Promise((r) => setTimeout(r, 1500));
    t.ok(listeCalls().length - callsAtCancel <= 4, 'at most the batches already in flight went on');
    const after = (await service.request('GET', `/sync/${first.body.syncId}`, { key: tenant })).body;
    t.equal(after.status, 'cancelled');
    t.ok(after.batchesCompleted < after.totalBatches);
    t.ok(
      events.some((e) => e.type === 'sync.cancelled' && e.data.syncId === first.body.syncId),
      'sync.cancelled emitted',
    );
    const again = await service.request('DELETE', `/sync/${first.body.syncId}`, { key: tenant });
    t.equal(again.status, 200);
    t.equal(again.body.status, 'cancelled');
    t.match(again.body.message, /already terminated/);
    const restart = await service.request('POST', '/sync/dossiers', { key: tenant, body: { opcoId } });
    t.equal(restart.status, 202, 'a new sync may start once the last one is cancelled');
    await service.request('DELETE', `/sync/${restart.body.syncId}`, { key: tenant });
  });

  t.test('DELETE of a finished sync leaves it as it is; other tenants see nothing', async (t) => {
    const accepted = await service.request('POST', '/sync/dossiers', {
      key: 'finished-tenant-key',
      body: { opcoId, minYear: 2025 },
    });
    await watchSync(service, accepted.body.syncId, { key: 'finished-tenant-key' });
    const reply = await service.request('DELETE', `/sync/${accepted.body.syncId}`, { key: 'finished-tenant-key' });
    t.equal(reply.status, 200);
    t.equal(reply.body.status, 'completed');
    t.match(reply.body.message, /already terminated/);
    t.equal((await service.request('GET', `/sync/${accepted.body.syncId}`, { key: KEY_A })).status, 404);
    t.equal((await service.request('DELETE', `/sync/${accepted.body.syncId}`, { key: KEY_A })).status, 404);
    t.equal((await service.request('GET', '/sync/no-such-sync', { key: KEY_A })).status, 404);
  });

  t.test('a batch that keeps failing fails the sync, says why, and frees the tenant for a new one', async (t) => {
    const tenant = 'failing-tenant-key';
    sandbox.faults.add({ route: listeFault, status: 422, body: { message: 'refus' } });
    t.teardown(() => sandbox.faults.clear());
    const accepted = await service.request('POST', '/sync/dossiers', { key: tenant, body: { opcoId, minYear: 2025 } });
    const { sync } = await watchSync(service, accepted.body.syncId, { key: tenant });
    t.equal(sync.status, 'failed');
    t.match(sync.error, /batch \d+ failed/);
    t.ok(sync.completedAt);
    const failed = await emitted(events, 'sync.failed', { syncId: sync.syncId });
    t.equal(failed.data.error, sync.error);
    sandbox.faults.clear();
    const next = await service.request('POST', '/sync/dossiers', { key: tenant, body: { opcoId, minYear: 2025 } });
    t.equal(next.status, 202, 'no 409 after a failure');
    t.equal((await watchSync(service, next.body.syncId, { key: tenant })).sync.status, 'completed');
  });
}
