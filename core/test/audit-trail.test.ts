// D32: the audit record is written before the answer leaves, and a record that cannot be written
// fails the request with 503, logged and counted.
import t from 'tap';
import { createEmbeddedStore, createLogger, AuditLog, TestClock, createError } from '../src/application.js';
import { AuditTrail } from '../src/audit/audit-trail.js';

const request = {
  actor: 'tenant' as const,
  tenant: 'c'.repeat(64),
  params: { opcoId: 'acme', id: '0b8f4a2e-6f3d-4c1a-9e57-2d8c1b0a9f64' },
  requestId: 'r-1',
  clientAddress: '203.0.113.7',
};

t.test('a record names the action, tenant, targets and outcome; nothing a client wrote but checked ids', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const log = new AuditLog(store, new TestClock({ frozen: true }));
  const counted: string[] = [];
  const trail = new AuditTrail({
    log,
    reads: false,
    knownOpco: (id) => id === 'acme',
    logger: createLogger({ level: 'silent' }),
    counted: (a, s) => counted.push(`${a}:${s}`),
    failed: () => undefined,
  });
  await trail.recorder('updateWebhook')!(request, {
    status: 200,
    body: { id: request.params.id, description: 'Léa Durand 185077512345678' },
  });
  await trail.recorder('deleteWebhook')!(
    { ...request, params: { id: 'Léa Durand' } },
    { status: 404, error: createError('NOT_FOUND') },
  );
  await trail.recorder('startSync')!(
    { ...request, params: {}, bodyOpcoId: 'Durand' },
    { status: 400, error: createError('VALIDATION_ERROR') },
  );
  const { items } = await log.page({}, {});
  const of = (action: string) => items.find((r) => r.action === action)!;
  t.match(of('updateWebhook'), {
    action: 'updateWebhook',
    tenant: request.tenant,
    opcoId: 'acme',
    targets: { webhookId: request.params.id },
    outcome: { status: 200 },
    requestId: 'r-1',
    clientAddress: '203.0.113.7',
  });
  t.same(of('deleteWebhook').targets, {}, 'an id the service did not make is left out');
  t.notOk('opcoId' in of('startSync'), 'an opcoId that is not configured is left out');
  t.notOk(JSON.stringify(items).includes('Durand'), 'no text of the client');
  t.same(counted, ['updateWebhook:200', 'deleteWebhook:404', 'startSync:400']);
  t.equal(trail.recorder('getDossier'), undefined, 'reads of personal data only with audit.reads');
  t.equal(trail.recorder('listWebhooks'), undefined, 'reads are not audited');
});

t.test('a record that cannot be written fails the request with 503 UNAVAILABLE, counted', async (t) => {
  const store = await createEmbeddedStore({});
  const log = new AuditLog(store, new TestClock({ frozen: true }));
  const failed: string[] = [];
  const trail = new AuditTrail({
    log,
    reads: true,
    knownOpco: () => true,
    logger: createLogger({ level: 'silent' }),
    counted: () => undefined,
    failed: (a) => failed.push(a),
  });
  await store.close();
  const err = await trail.recorder('postFacture')!(request, {
    status: 202,
    body: { jobId: '3b241101-e2bb-4255-8caf-4136c566a962' },
  }).catch((e: unknown) => e);
  t.match(err, { code: 'UNAVAILABLE', status: 503, headers: { 'Retry-After': '5' } });
  t.same(failed, ['postFacture']);
});

t.test('the export reads every record of a period oldest first, page after page', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const log = new AuditLog(store, clock);
  const written: string[] = [];
  for (let i = 0; i < 5; i++) {
    await log.write({
      tenant: request.tenant,
      actor: 'tenant',
      action: `action${i}`,
      targets: {},
      outcome: { status: 200 },
      requestId: `r-${i}`,
      clientAddress: request.clientAddress,
    });
    written.push(`r-${i}`);
    await clock.advance(1000);
  }
  const read: string[] = [];
  for await (const record of log.all({}, 2)) read.push(record.requestId);
  t.same(read, written, 'all five, in order, in pages of two');
  const since: string[] = [];
  for await (const record of log.all({ since: new Date(clock.now() - 3000).toISOString() }, 2))
    since.push(record.requestId);
  t.same(since, ['r-2', 'r-3', 'r-4']);
});
