// The sync operations of SPEC 4.14 and the operators' view (P9) over HTTP: an opcoId that is not
// configured is a 400, a second sync while one runs a 409 naming it, each tenant sees and cancels
// only its own syncs, a finished sync is not cancelled, operators list every tenant's syncs.
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { KEY, OTHER_KEY, PATHS, startSyncService } from './fixtures/sync-service.js';

t.test('an opcoId that is not configured is a 400 naming it', async (t) => {
  const service = await startSyncService(t, { dossierCount: 5 });
  const reply = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'nowhere' } });
  t.equal(reply.status, 400);
  t.match(reply.body, { code: 'VALIDATION_ERROR', errors: ['opcoId: unknown OPCO "nowhere"'] });
});

t.test('one sync at a time per tenant and opcoId (D19); a cancel frees the next', async (t) => {
  const service = await startSyncService(t, { dossierCount: 5 });
  service.sandbox.faults.add({ route: `GET ${PATHS.etats}`, hang: true });
  const first = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  t.match(first, { status: 202, body: { status: 'pending', statusUrl: `/sync/${first.body.syncId}` } });
  const second = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  t.equal(second.status, 409);
  t.match(second.body, { code: 'CONFLICT', syncId: first.body.syncId });
  t.equal(
    (await service.send('POST', '/sync/dossiers', { key: OTHER_KEY, body: { opcoId: 'sandbox' } })).status,
    202,
    'another tenant is not held back',
  );
  t.same(await service.send('DELETE', `/sync/${first.body.syncId}`), {
    status: 200,
    body: { syncId: first.body.syncId, status: 'cancelled' },
  });
  await service.emitted('sync.cancelled', { syncId: first.body.syncId });
  t.equal(
    (await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } })).status,
    202,
    'a new sync once the first is cancelled',
  );
});

t.test('each tenant sees and cancels only its own syncs', async (t) => {
  const service = await startSyncService(t, { dossierCount: 5 });
  service.sandbox.faults.add({ route: `GET ${PATHS.etats}`, hang: true });
  const { body } = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  t.equal((await service.send('GET', `/sync/${body.syncId}`, { key: OTHER_KEY })).status, 404);
  t.equal((await service.send('DELETE', `/sync/${body.syncId}`, { key: OTHER_KEY })).status, 404);
  t.match(
    await service.send('GET', `/sync/${body.syncId}`),
    { status: 200, body: { syncId: body.syncId, opcoId: 'sandbox' } },
    'still there, still running',
  );
  t.match((await service.send('GET', `/sync/${body.syncId}`)).body.status, /^(pending|processing)$/);
  t.equal((await service.send('GET', '/sync/no-such-sync')).status, 404);
});

t.test('a finished sync is not cancelled: the answer says what it is', async (t) => {
  const service = await startSyncService(t, { dossierCount: 5 });
  const { body } = await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  await service.emitted('sync.completed', { syncId: body.syncId });
  const reply = await service.send('DELETE', `/sync/${body.syncId}`);
  t.match(reply, { status: 200, body: { syncId: body.syncId, status: 'completed', message: /already terminated/ } });
  t.notOk(
    service.events.some((e) => e.type === 'sync.cancelled'),
    'no sync.cancelled',
  );
});

t.test("operators list every tenant's syncs by status, tenants by hash, never a key", async (t) => {
  const service = await startSyncService(t, { dossierCount: 5 });
  const mine = (await service.send('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } })).body.syncId;
  await service.emitted('sync.completed', { syncId: mine });
  const theirs = (await service.send('POST', '/sync/dossiers', { key: OTHER_KEY, body: { opcoId: 'sandbox' } })).body
    .syncId;
  await service.emitted('sync.completed', { syncId: theirs });
  t.equal((await service.send('GET', '/admin/syncs')).status, 401, 'a tenant key is no operator key');
  const completed = await service.send('GET', '/admin/syncs?status=completed', { admin: true });
  t.equal(completed.status, 200);
  t.same(
    completed.body.items.map((i: any) => [i.tenant, i.sync.syncId]).sort(),
    [
      [tenantHash(KEY), mine],
      [tenantHash(OTHER_KEY), theirs],
    ].sort(),
  );
  t.notMatch(JSON.stringify(completed.body), KEY, 'no key in the answer');
  t.same((await service.send('GET', '/admin/syncs', { admin: true })).body.items, [], 'none running');
});
