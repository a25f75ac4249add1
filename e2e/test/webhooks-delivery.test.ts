// SPEC 6, D22, D23: job events reach subscribed, active webhooks as signed notifications;
// a slow receiver does not hold back another; redirects are not followed.
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import {
  deliveryLogs,
  startService,
  startReceiver,
  signatureValid,
  dossierBody,
  factureBody,
  waitForJob,
  PDF,
  KEY_A,
  KEY_B,
} from '../src/index.js';

const service = await startService({ config: { jobs: { backoffMs: [50, 50, 50] } } });
const receiver = await startReceiver();
t.teardown(async () => {
  await service.close();
  await receiver.close();
});
const subscribe = async (events: string[], path: string, key = KEY_A) => {
  const reply = await service.request('POST', '/webhooks', {
    key,
    body: { callbackUrl: `${receiver.url}${path}`, events },
  });
  if (reply.status !== 201) throw new Error(reply.text);
  return reply.body as { id: string; secret: string };
};
const at = (path: string) => receiver.received.filter((r) => r.path === path);
const settle = async (ms = 300) => new Promise((r) => setTimeout(r, ms));

t.test('job events arrive signed, with the D22 data, on every delivery', async (t) => {
  const all = await subscribe(['job.completed', 'job.failed', 'job.progress'], '/all');
  const reply = await service.request('POST', '/sandbox/dossiers', {
    body: dossierBody({ _files: { cerfa: PDF.toString('base64') } }),
  });
  const job = await waitForJob(service, reply.body.statusUrl);
  t.equal(job.status, 'completed');
  for (let i = 0; i < 100 && at('/all').length < 3; i++) await settle(50);
  // Deliveries run concurrently: the last progress and the completion may arrive in either order.
  const order = { 'job.progress': 0, 'job.completed': 1 } as Record<string, number>;
  const requests = [...at('/all')].sort(
    (a, b) => order[a.body.event] - order[b.body.event] || a.body.data.step - b.body.data.step,
  );
  t.same(
    requests.map((r) => r.body.event),
    ['job.progress', 'job.progress', 'job.completed'],
  );
  for (const request of requests) {
    t.ok(signatureValid(all.secret, request), 'valid Svc-Signature over the raw body');
    t.match(String(request.headers['svc-signature']), /^[0-9a-f]{64}$/, 'lowercase hex');
    t.equal(request.headers['svc-event'], request.body.event);
    t.match(String(request.headers['content-type']), /^application\/json/);
    t.match(String(request.headers['svc-delivery-id']), /^[0-9a-f]{32}$/);
    t.ok(!Number.isNaN(Date.parse(String(request.headers['svc-timestamp']))));
    t.same(Object.keys(request.body).sort(), ['data', 'event', 'opcoId', 'timestamp']);
    t.equal(request.body.opcoId, 'sandbox');
  }
  t.equal(new Set(requests.map((r) => r.headers['svc-delivery-id'])).size, 3, 'one delivery id per event');
  t.same(requests[0].body.data, {
    jobId: job.jobId,
    type: 'post-dossier',
    step: 1,
    totalSteps: 2,
    name: 'dossier',
    status: 'completed',
  });
  t.same(requests[2].body.data, {
    jobId: job.jobId,
    type: 'post-dossier',
    status: 'completed',
    result: job.result,
    completedAt: job.completedAt,
  });
  const tampered = { ...requests[2], raw: requests[2].raw.replace('completed', 'failed') };
  t.notOk(signatureValid(all.secret, tampered), 'a changed body fails the check');

  const failing = await subscribe(['job.failed'], '/failed');
  service.sandbox.faults.add({ route: 'POST /v1/factures', status: 422, body: { message: 'non' }, times: 1 });
  const bad = await service.request('POST', '/sandbox/factures', { body: factureBody('DOS-1') });
  const failedJob = await waitForJob(service, bad.body.statusUrl);
  for (let i = 0; i < 100 && at('/failed').length < 1; i++) await settle(50);
  const [failed] = at('/failed');
  t.ok(signatureValid(failing.secret, failed));
  t.same(failed.body.data, {
    jobId: failedJob.jobId,
    type: 'post-facture',
    status: 'failed',
    error: failedJob.error,
    retries: 0,
  });
  // Deliveries are recorded before any is sent (D25), and a job's events are fanned out in order,
  // its end last: once job.failed is here, this webhook's logs hold all it will ever get of them.
  const failingLogs = await deliveryLogs(service, failing.id, (logs) => logs.some((l) => l.status === 'delivered'));
  t.same(
    failingLogs.map((l) => l.event),
    ['job.failed'],
    'the job.failed-only webhook got nothing else',
  );
  t.equal(at('/failed').length, 1);
});

t.test('inactive webhooks and other tenants receive nothing; logs show each delivery', async (t) => {
  const inactive = await subscribe(['job.completed'], '/inactive');
  await service.request('PATCH', `/webhooks/${inactive.id}`, { body: { active: false } });
  const tenantB = await subscribe(['job.completed'], '/tenant-b', KEY_B);
  const listening = await subscribe(['job.completed'], '/listening');
  const reply = await service.request('POST', '/sandbox/factures', { body: factureBody('DOS-2') });
  await waitForJob(service, reply.body.statusUrl);
  for (let i = 0; i < 100 && at('/listening').length < 1; i++) await settle(50);
  t.equal(at('/listening').length, 1);
  // An event's deliveries are recorded in one insert before any is sent (D25): once /listening
  // has its request, the other webhooks' logs are final.
  t.same((await service.get(`/webhooks/${tenantB.id}/logs`, { key: KEY_B })).body, [], 'another tenant: nothing');
  t.equal(at('/inactive').length, 0, 'inactive: nothing');
  t.equal(at('/tenant-b').length, 0, 'another tenant: nothing sent');
  const logs = await deliveryLogs(service, listening.id, (entries) => entries[0]?.status === 'delivered');
  t.equal(logs.length, 1);
  t.match(logs[0], {
    webhookId: listening.id,
    event: 'job.completed',
    status: 'delivered',
    statusCode: 200,
    attempts: 1,
    error: null,
  });
  t.equal(logs[0].payload.data.jobId, reply.body.jobId);
  t.ok(logs[0].deliveredAt);
  t.same((await service.get(`/webhooks/${inactive.id}/logs`)).body, []);
});

t.test('a slow receiver does not hold back another', async (t) => {
  // The slow receiver answers nothing until the test releases it: no delay to outrun.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const slow = await startReceiver({ status: 200, until: released });
  t.teardown(() => {
    release();
    return slow.close();
  });
  const tenant = 'slow-fast-tenant-key';
  const slowHook = await service.request('POST', '/webhooks', {
    key: tenant,
    body: { callbackUrl: `${slow.url}/slow`, events: ['sync.batch'] },
  });
  await service.request('POST', '/webhooks', {
    key: tenant,
    body: { callbackUrl: `${receiver.url}/fast`, events: ['sync.batch'] },
  });
  const slowDelivered = async () =>
    (
      (await service.get(`/webhooks/${slowHook.body.id}/logs`, { key: tenant })).body as Array<{ status: string }>
    ).filter((l) => l.status === 'delivered').length;
  for (let batch = 1; batch <= 5; batch++) {
    await service.kernel.emit({
      type: 'sync.batch',
      tenant: tenantHash(tenant),
      opcoId: 'sandbox',
      data: { syncId: 's', batch, totalBatches: 5, dossiers: [] },
    });
  }
  for (let i = 0; i < 100 && at('/fast').length < 5; i++) await settle(50);
  t.equal(at('/fast').length, 5, 'all five reached the fast receiver while the slow one answered none');
  // Five arrivals while none is answered: they ran side by side.
  await slow.waitFor(5, 10_000);
  t.equal(await slowDelivered(), 0, 'the five slow deliveries were all under way, none answered');
  release();
  await deliveryLogs(
    service,
    slowHook.body.id,
    (logs) => logs.filter((l) => l.status === 'delivered').length === 5,
    tenant,
  );
});

t.test('a redirect is never followed', async (t) => {
  const target = await startReceiver();
  // Receivers that redirect on every attempt, retries included.
  const toLoopback = await startReceiver({ status: 302, headers: { location: `${target.url}/private` } });
  const toPrivate = await startReceiver({ status: 307, headers: { location: 'http://10.0.0.1/internal' } });
  t.teardown(async () => {
    await Promise.all([target.close(), toLoopback.close(), toPrivate.close()]);
  });
  const tenant = 'redirect-tenant-key';
  const hooks = [];
  for (const redirector of [toLoopback, toPrivate]) {
    const created = await service.request('POST', '/webhooks', {
      key: tenant,
      body: { callbackUrl: `${redirector.url}/redirect`, events: ['sync.completed'] },
    });
    hooks.push(created.body.id as string);
  }
  await service.kernel.emit({
    type: 'sync.completed',
    tenant: tenantHash(tenant),
    opcoId: 'sandbox',
    data: { syncId: 's', total: 0, durationMs: 1 },
  });
  await Promise.all([toLoopback.waitFor(2, 10_000), toPrivate.waitFor(2, 10_000)]);
  const [loopbackLogs, privateLogs] = await Promise.all(
    hooks.map((id) => deliveryLogs(service, id, (logs) => logs[0]?.attempts >= 2, tenant)),
  );
  t.equal(target.received.length, 0, 'the redirect target was never contacted');
  t.match(
    loopbackLogs[0],
    { statusCode: 302, status: 'retrying', error: 'receiver answered 302' },
    'a redirect is a failed attempt, not a hop',
  );
  t.match(privateLogs[0], { statusCode: 307, status: 'retrying', error: 'receiver answered 307' });
});
