// The operator API (P9): across tenants, behind the operator key, every answer checked against /doc.
import t from 'tap';
import {
  ADMIN_KEY,
  KEY_A,
  RECEIVER_TOKEN,
  TENANT_A,
  TENANT_B,
  eventually,
  startOperatorScene,
  startService,
  type OperatorScene,
} from '../src/index.js';

t.test('without OPCO_PROXY_ADMIN_KEY the operator routes are off and say how to turn them on', async (t) => {
  const service = await startService();
  t.teardown(() => service.close());
  const reply = await service.request('GET', '/admin/jobs', {
    key: null,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  t.equal(reply.status, 403);
  t.equal(reply.body.code, 'HTTP_ERROR');
  t.match(reply.body.description, /OPCO_PROXY_ADMIN_KEY/);
});

t.test('operator routes across tenants', async (t) => {
  const scene: OperatorScene = await startOperatorScene();
  t.teardown(() => scene.close());
  const { admin, service } = scene;

  t.test('a missing or wrong operator key is 401, and a tenant key is no operator key', async (t) => {
    for (const [what, auth, key] of [
      ['no Authorization', null, undefined],
      ['a wrong key', 'Bearer not-the-operator-key-0000000000000000', undefined],
      ['a tenant key as X-API-KEY', null, KEY_A],
      ['a tenant key as the bearer', `Bearer ${KEY_A}`, undefined],
      ['another scheme', `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString('base64')}`, undefined],
    ] as const) {
      const reply = await admin('/admin/jobs', { auth, key });
      t.equal(reply.status, 401, what);
      t.equal(reply.body.code, 'UNAUTHORIZED', what);
      t.match(reply.headers.get('www-authenticate'), /^Bearer /, what);
    }
    const resend = await admin(`/admin/deliveries/${scene.deliveryId}/resend`, { method: 'POST', auth: null });
    t.equal(resend.status, 401, 'the resend too');
    t.equal(scene.receiver.received.length, 1, 'and nothing was sent again');
  });

  t.test('/doc lists the operator routes behind the operator key', async (t) => {
    const doc = (await service.get('/doc', { key: null })).body;
    for (const path of [
      '/admin/jobs',
      '/admin/deliveries',
      '/admin/webhooks',
      '/admin/syncs',
      '/admin/pollers',
      '/admin/upstreams',
      '/admin/queues',
    ]) {
      t.same(doc.paths[path].get.security, [{ OperatorKey: [] }], path);
      t.ok(doc.paths[path].get.responses['401'], `${path} documents 401`);
    }
    t.ok(doc.paths['/admin/deliveries/{deliveryId}/resend'].post);
    t.same(doc.paths['/console'].get.security, [], 'the console page needs no key');
  });

  t.test('jobs: the failed one with its error, counts per opcoId, filters and pages', async (t) => {
    const failed = await admin('/admin/jobs?status=failed');
    t.equal(failed.status, 200);
    const item = failed.body.items.find((i: any) => i.job.jobId === scene.failedJob.jobId);
    t.ok(item, 'the failed job is listed');
    t.equal(item.tenant, TENANT_A, 'its tenant as a hash');
    t.equal(item.job.error.code, 'UPSTREAM_ERROR');
    t.same(item.job.error.upstream, { message: 'montant incohérent avec le dossier' }, 'the upstream error body');
    t.notOk(failed.text.includes(KEY_A), 'no API key anywhere');
    const sandbox = failed.body.counts.find((c: any) => c.opcoId === 'sandbox');
    t.equal(sandbox.failed, 1);

    for (let i = 0; i < 2; i++) {
      const reply = await service.request('POST', '/sandbox/factures', {
        body: {
          montantTotal: 1,
          numero: `F-${i}`,
          dateEmission: '2024-10-15',
          ibanEmetteur: 'FR7630006000011234567890189',
          siretEmetteur: '98765432109876',
          estCertificatRealisation: false,
          lignes: [
            {
              montant: 1,
              natureLigne: 'PEDAGOGIE',
              quantite: 1,
              numeroDossier: service.sandbox.dataset.dossiers[0].numeroInterne,
            },
          ],
        },
      });
      t.equal(reply.status, 202);
    }
    const first = await admin('/admin/jobs?opcoId=sandbox&limit=2');
    t.equal(first.body.items.length, 2);
    t.type(first.body.next, 'string');
    t.same(
      first.body.counts.map((c: any) => c.opcoId),
      ['sandbox'],
      'counts of the opcoId asked for',
    );
    const second = await admin(`/admin/jobs?opcoId=sandbox&limit=2&cursor=${first.body.next}`);
    t.equal(second.body.items.length, 1);
    t.equal(second.body.next, null);
    const ids = [...first.body.items, ...second.body.items].map((i: any) => i.job.jobId);
    t.equal(new Set(ids).size, 3, 'three different jobs over two pages');
    t.equal((await admin('/admin/jobs?opcoId=classic')).body.items.length, 0, 'another opcoId has none');
    const invalid = await admin('/admin/jobs?status=lost');
    t.equal(invalid.status, 400);
    t.equal((await admin('/admin/jobs?cursor=bm90LWEtY3Vyc29y')).status, 400, 'a cursor of nothing is 400');
  });

  t.test('deliveries: the failed one, without secrets, and a resend that reaches the receiver', async (t) => {
    const reply = await admin('/admin/deliveries');
    t.equal(reply.status, 200);
    const delivery = reply.body.items.find((d: any) => d.id === scene.deliveryId);
    t.ok(delivery, 'the failed job.failed delivery');
    t.equal(delivery.status, 'failed');
    t.equal(delivery.statusCode, 500);
    t.equal(delivery.event, 'job.failed');
    t.equal(delivery.tenant, TENANT_A);
    t.equal(delivery.target, `${scene.receiver.url}/hooks/jobs`, 'origin and path only');
    for (const secret of [RECEIVER_TOKEN, scene.webhook.secret, scene.webhook.signingSecret, KEY_A])
      t.notOk(reply.text.includes(secret), 'no secret shown');

    scene.receiver.fallback = { status: 200 };
    const before = scene.receiver.received.length;
    const resent = await admin(`/admin/deliveries/${scene.deliveryId}/resend`, { method: 'POST' });
    t.equal(resent.status, 202, resent.text);
    t.same(resent.body, { deliveryId: scene.deliveryId, event: 'job.failed', status: 'retrying' });
    const again = await eventually(
      () => scene.receiver.received.slice(before).find((r) => r.headers['svc-delivery-id'] === scene.deliveryId),
      'the delivery sent again',
    );
    t.equal(again.body.data.jobId, scene.failedJob.jobId);
    await eventually(
      async () =>
        (await admin('/admin/deliveries?status=delivered')).body.items.some((d: any) => d.id === scene.deliveryId),
      'the delivery recorded as delivered',
    );
    t.equal(
      (await admin('/admin/deliveries/0123456789abcdef0123456789abcdef/resend', { method: 'POST' })).status,
      404,
      'an unknown delivery',
    );
  });

  t.test('webhooks: failing and disabled ones, and no resend to a switched-off webhook', async (t) => {
    const all = await admin('/admin/webhooks?state=all');
    t.equal(all.body.items.length, 1);
    t.notOk(all.text.includes(scene.webhook.secret));
    await service.kernel.store.collection('webhooks').updateMany(
      { _id: scene.webhook.id },
      {
        $set: {
          active: false,
          failingSince: new Date('2026-01-01T00:00:00Z'),
          disabledAt: new Date('2026-01-06T00:00:00Z'),
          disabledReason: 'every delivery failed since 2026-01-01T00:00:00.000Z',
        },
      },
    );
    const disabled = await admin('/admin/webhooks');
    t.equal(disabled.body.items.length, 1, 'disabled ones by default');
    t.match(disabled.body.items[0], {
      id: scene.webhook.id,
      tenant: TENANT_A,
      active: false,
      disabledAt: '2026-01-06T00:00:00.000Z',
      target: `${scene.receiver.url}/hooks/jobs`,
    });
    t.equal((await admin('/admin/webhooks?state=failing')).body.items.length, 1);
    const refused = await admin(`/admin/deliveries/${scene.deliveryId}/resend`, { method: 'POST' });
    t.equal(refused.status, 409, 'its tenant turns it back on, not the operator');
  });

  t.test('syncs with their progress, and pollers', async (t) => {
    const running = await admin('/admin/syncs');
    const item = running.body.items.find((i: any) => i.sync.syncId === scene.runningSyncId);
    t.ok(item, 'the running sync');
    t.equal(item.tenant, TENANT_A);
    t.equal(item.sync.status, 'processing');
    t.ok(item.sync.totalBatches > 0);
    const completed = await admin('/admin/syncs?status=completed');
    t.equal(completed.body.items.length, 1);
    t.equal(completed.body.items[0].tenant, TENANT_B);
    const pollers = await admin('/admin/pollers');
    t.match(pollers.body.items, [{ tenant: TENANT_B, poller: { opcoId: 'sandbox', status: 'active' } }]);
    t.notOk(pollers.text.includes('tenant-b-key'), 'the sealed key stays sealed');
  });

  t.test('upstreams: rate limit, store budget and the last 60 seconds per opcoId', async (t) => {
    const reply = await admin('/admin/upstreams');
    const sandbox = reply.body.items.find((i: any) => i.opcoId === 'sandbox');
    t.equal(sandbox.adapter, 'sandbox');
    t.equal(sandbox.admission.provider, 'store-budget');
    t.ok(sandbox.admission.used >= 1, `calls counted in the window (${sandbox.admission.used})`);
    t.ok(sandbox.admission.used <= sandbox.rateLimit.limit);
    t.ok(sandbox.window.requests >= 1);
    t.notOk('hub' in sandbox.admission, 'no hub without its plugin');
  });

  t.test('queues: each work queue of the enabled plugins', async (t) => {
    const reply = await admin('/admin/queues');
    t.equal(reply.body.kind, 'embedded');
    t.same(reply.body.items.map((q: any) => q.queue).sort(), ['jobs', 'sync', 'webhook-deliveries']);
    for (const queue of reply.body.items) t.ok(queue.consumers >= 1, `${queue.queue} has its consumer`);
  });
});
