// Pollers (D21) on a kernel with the sync plugin, in front of the sandbox: a sync with
// enablePoller starts one; each poll runs once its interval has passed on the clock; the first
// poll takes the invoices as they are; later polls tell what changed (dossier.etat_changed,
// dossier.updated, facture.etat_changed); a failed poll is kept as lastError; DELETE stops it.
import t from 'tap';
import { MINUTE, OTHER_KEY, PATHS, startSyncService, type SyncService } from './fixtures/sync-service.js';

/** A completed sync with enablePoller: its poller is started. */
async function syncWithPoller(service: SyncService): Promise<any> {
  const accepted = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox', enablePoller: true } });
  await service.emitted('sync.completed', { syncId: accepted.body.syncId });
  return (await service.send('GET', `/sync/${accepted.body.syncId}`)).body;
}

const pollers = async (service: SyncService, key?: string) => (await service.send('GET', '/pollers', { key })).body;

/** Moves the clock one interval at a time until the poller has polled once more. */
async function nextPoll(service: SyncService): Promise<any> {
  const [before] = await pollers(service);
  return service.until(
    async () => {
      const [poller] = await pollers(service);
      return poller.lastPollAt !== before.lastPollAt && poller;
    },
    'the next poll',
    MINUTE,
  );
}

t.test('a sync with enablePoller starts a poller; each poll waits for its interval', async (t) => {
  const service = await startSyncService(t, { dossierCount: 30 });
  const sync = await syncWithPoller(service);
  const [poller] = await pollers(service);
  t.match(poller, { opcoId: 'sandbox', status: 'active', intervalMs: MINUTE, lastError: null });
  t.equal(poller.lastPollAt, sync.startedAt, 'it reads what changed since the sync started');
  const wait = Date.parse(poller.nextPollAt) - Date.parse(sync.completedAt);
  t.ok(wait >= MINUTE && wait < MINUTE + 2000, `its first poll is one interval after the sync ended (${wait} ms)`);
  t.same(await pollers(service, OTHER_KEY), [], 'another tenant sees none');
  const etatsBefore = service.calls(PATHS.etats).length;
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(service.calls(PATHS.etats).length, etatsBefore, 'no poll before the clock moves');
  await nextPoll(service);
  const polled = service.calls(PATHS.etats).slice(etatsBefore);
  t.ok(polled.length >= 1, 'the poll read the states');
  t.match(polled[0].query, { dateModification: /^\d{4}-\d{2}-\d{2}$/ }, 'changed since the last poll');
  t.notOk(
    service.events.some((e) => e.type.startsWith('dossier.') || e.type.startsWith('facture.')),
    'nothing changed since the sync: no event',
  );
});

t.test('later polls tell what changed upstream, once each', async (t) => {
  const service = await startSyncService(t, { dossierCount: 30, factureCount: 10 });
  await syncWithPoller(service);
  await nextPoll(service); // takes the invoices as they are
  const moved = service.sandbox.advance({ dossiers: 2, factures: 1 });
  await nextPoll(service);
  const changed = service.events.filter((e) => e.type === 'dossier.etat_changed');
  t.same(changed.map((e) => e.data.numeroInterne).sort(), [...moved.dossiers].sort());
  for (const event of changed) {
    const now = service.sandbox.dataset.dossier(event.data.numeroInterne as string)!;
    t.not(event.data.previousEtat, event.data.etat, 'from one state to another');
    t.equal(event.data.etat, (now as { etat?: string }).etat, 'the state the upstream has now');
  }
  t.same(
    service.events
      .filter((e) => e.type === 'dossier.updated')
      .map((e) => e.data.numeroInterne)
      .sort(),
    [...moved.dossiers].sort(),
    'their content changed too',
  );
  t.same(
    service.events.filter((e) => e.type === 'facture.etat_changed').map((e) => e.data.numeroInterneFacture),
    moved.factures,
  );
  t.ok(
    service.events
      .filter((e) => e.type.includes('.etat_changed') || e.type === 'dossier.updated')
      .every((e) => e.opcoId === 'sandbox'),
  );
  const count = service.events.length;
  await nextPoll(service);
  t.equal(service.events.length, count, 'the next poll finds nothing new');
});

t.test('a failed poll is kept as lastError, and the next one is tried an interval later', async (t) => {
  const service = await startSyncService(t, { dossierCount: 10 });
  await syncWithPoller(service);
  service.sandbox.faults.add({ route: `GET ${PATHS.etats}`, status: 500 });
  const failed = await service.until(
    async () => {
      const [poller] = await pollers(service);
      return poller.lastError && poller;
    },
    'a failed poll',
    MINUTE,
  );
  t.match(failed.lastError, /500/);
  service.sandbox.faults.clear();
  const recovered = await service.until(
    async () => {
      const [poller] = await pollers(service);
      return poller.lastError === null && poller;
    },
    'a poll that works',
    MINUTE,
  );
  t.ok(Date.parse(recovered.lastPollAt) > Date.parse(failed.lastPollAt), 'lastPollAt moves only when a poll works');
});

t.test('DELETE /pollers/{opcoId} stops the poller of the tenant only', async (t) => {
  const service = await startSyncService(t, { dossierCount: 10 });
  await syncWithPoller(service);
  t.equal((await service.send('DELETE', '/pollers/sandbox', { key: OTHER_KEY })).status, 404, "not another tenant's");
  t.same(await service.send('DELETE', '/pollers/sandbox'), { status: 200, body: { deleted: true } });
  t.same(await pollers(service), []);
  t.equal((await service.send('DELETE', '/pollers/sandbox')).status, 404, 'gone');
  const etats = service.calls(PATHS.etats).length;
  for (let i = 0; i < 3; i++) await service.clock.advance(MINUTE);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(service.calls(PATHS.etats).length, etats, 'no more polls');
});
