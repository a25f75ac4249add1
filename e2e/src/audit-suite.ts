/**
 * Audit records end to end (SPEC 5.3, 5.5; D32), on one backend: every audited route once, its
 * record read back through GET /audit with its action, targets, outcome and request id; another
 * tenant sees none of them; operators see all through GET /admin/audit; refused requests are
 * recorded with their outcome; and none of the names, NIR, IBAN, keys and secrets sent through
 * those routes is in the audit collection.
 */
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, writeConfig } from './processes.js';
import { sha256Hex } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { KEY_A, KEY_B, startService, type Service } from './harness.js';
import { certificatBody, conventionBody, dossierBody, documentBody, factureBody, waitForJob } from './jobs-client.js';
import { startReceiver } from './receiver.js';
import { eventually } from './eventually.js';

const execFileAsync = promisify(execFile);

export const AUDIT_ADMIN_KEY = 'audit-suite-operator-key-0123456789abcdef';

/** What must never reach an audit record: personal data and secrets, each findable by its text. */
export const MARKS = {
  nom: 'Zorglubnom',
  prenom: 'Quetzalprenom',
  nir: '185077512345678',
  iban: 'FR7630006000019876543210189',
  denomination: 'Boulangerie Marqueterie',
} as const;

type Requested = { action: string; requestId: string; status: number };

export function auditSuite(t: Test, backends: () => Record<string, unknown> | undefined): void {
  t.test('every audited route writes one record, read back by its tenant only, and by operators', async (t) => {
    const receiver = await startReceiver();
    const service = await startService({ config: { ...backends() }, env: { OPCO_PROXY_ADMIN_KEY: AUDIT_ADMIN_KEY } });
    t.teardown(async () => {
      await service.close();
      await receiver.close();
    });
    const requested: Requested[] = [];
    let n = 0;
    const call = async (
      action: string,
      method: string,
      path: string,
      options: { body?: unknown; headers?: Record<string, string>; admin?: boolean } = {},
    ) => {
      const requestId = `audit-${++n}-${action}`;
      const headers: Record<string, string> = { 'x-request-id': requestId, ...options.headers };
      if (options.admin) headers.authorization = `Bearer ${AUDIT_ADMIN_KEY}`;
      const reply = await service.request(method, path, {
        body: options.body,
        headers,
        key: options.admin ? null : KEY_A,
      });
      requested.push({ action, requestId, status: reply.status });
      return reply;
    };
    const numero = service.sandbox.dataset.dossiers[0].numeroInterne;
    const marked = dossierBody();
    marked.cerfa.apprenti = { ...marked.cerfa.apprenti, nom: MARKS.nom, prenom: MARKS.prenom, nomUsage: MARKS.nir };
    marked.cerfa.employeur = { ...marked.cerfa.employeur, denomination: MARKS.denomination };
    const dossier = await call('postDossier', 'POST', '/sandbox/dossiers', {
      body: marked,
      headers: { 'idempotency-key': `idem-${MARKS.nom}` },
    });
    t.equal(dossier.status, 202);
    t.equal(
      (
        await call('postDossier', 'POST', '/sandbox/dossiers', {
          body: marked,
          headers: { 'idempotency-key': `idem-${MARKS.nom}` },
        })
      ).status,
      200,
      'the same Idempotency-Key: duplicate',
    );
    const facture = { ...factureBody(numero), ibanEmetteur: MARKS.iban };
    t.equal((await call('postFacture', 'POST', '/sandbox/factures', { body: facture })).status, 202);
    t.equal(
      (await call('postConvention', 'POST', '/sandbox/conventions', { body: conventionBody(numero) })).status,
      202,
    );
    t.equal(
      (await call('postCertificat', 'POST', '/sandbox/certificats', { body: certificatBody(numero) })).status,
      202,
    );
    t.equal((await call('postDocument', 'POST', '/sandbox/documents', { body: documentBody(numero) })).status, 202);
    t.equal(
      (await call('postFacture', 'POST', '/sandbox/factures', { body: { ...facture, montantTotal: 'beaucoup' } }))
        .status,
      400,
      'a refused body',
    );

    const sync = await call('startSync', 'POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
    t.equal(sync.status, 202);
    t.equal(
      (await call('startSync', 'POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } })).status,
      409,
      'a second sync while one runs',
    );
    t.equal((await call('cancelSync', 'DELETE', `/sync/${sync.body.syncId}`)).status, 200);

    const hook = await call('createWebhook', 'POST', '/webhooks', {
      body: { callbackUrl: `${receiver.url}/audit`, events: ['job.completed'], description: `NIR ${MARKS.nir}` },
    });
    t.equal(hook.status, 201);
    t.equal(
      (
        await call('updateWebhook', 'PATCH', `/webhooks/${hook.body.id}`, {
          body: { description: `contact ${MARKS.nom}` },
        })
      ).status,
      200,
    );
    const test = await call('testWebhook', 'POST', `/webhooks/${hook.body.id}/test`);
    t.equal(test.status, 202);
    await eventually(
      async () =>
        (await service.get(`/webhooks/${hook.body.id}/logs`)).body.some(
          (d: { status: string }) => d.status === 'delivered',
        ),
      'the test delivery delivered',
      15_000,
    );
    t.equal(
      (
        await call(
          'resendWebhookDelivery',
          'POST',
          `/webhooks/${hook.body.id}/deliveries/${test.body.deliveryId}/resend`,
        )
      ).status,
      202,
    );
    t.equal(
      (
        await call('recoverWebhookDeliveries', 'POST', `/webhooks/${hook.body.id}/recover`, {
          body: { since: '2020-01-01T00:00:00Z' },
        })
      ).status,
      202,
    );
    t.equal((await call('rotateWebhookSecret', 'POST', `/webhooks/${hook.body.id}/rotate-secret`)).status, 200);
    t.equal(
      (await call('resendAdminDelivery', 'POST', `/admin/deliveries/${test.body.deliveryId}/resend`, { admin: true }))
        .status,
      202,
      'an operator action',
    );
    t.equal((await call('deleteWebhook', 'DELETE', `/webhooks/${hook.body.id}`)).status, 200);
    t.equal(
      (await call('deleteWebhook', 'DELETE', `/webhooks/${MARKS.nir}`)).status,
      404,
      'an unknown webhook, named with personal data',
    );
    t.equal((await call('deletePoller', 'DELETE', '/pollers/sandbox')).status, 404, 'no poller to stop');
    await waitForJob(service, dossier.body.statusUrl);

    const mine = await readAll(service, '/audit?limit=5');
    t.ok(mine.pages > 1, `paged by the Link header (${mine.pages} pages of 5)`);
    const tenantRequests = requested.filter((r) => r.action !== 'resendAdminDelivery');
    for (const request of tenantRequests) {
      const record = mine.items.find((r) => r.requestId === request.requestId);
      t.ok(record, `${request.action} (${request.status}) recorded`);
      t.match(
        record,
        { action: request.action, actor: 'tenant', tenant: sha256Hex(KEY_A), outcome: { status: request.status } },
        `${request.action}: action, tenant, outcome`,
      );
      if (request.status >= 400)
        t.type(record?.outcome.code, 'string', `${request.action}: the error code of the refusal`);
    }
    const byId = (action: string, status: number) =>
      mine.items.find((r) => r.action === action && r.outcome.status === status)!;
    t.match(byId('postDossier', 202), {
      opcoId: 'sandbox',
      targets: { jobId: dossier.body.jobId },
      outcome: { idempotency: 'new' },
    });
    t.match(byId('postDossier', 200), {
      targets: { jobId: dossier.body.jobId },
      outcome: { idempotency: 'duplicate' },
    });
    t.match(byId('startSync', 202), { opcoId: 'sandbox', targets: { syncId: sync.body.syncId } });
    t.match(byId('startSync', 409), { opcoId: 'sandbox', outcome: { code: 'CONFLICT' } });
    t.match(byId('createWebhook', 201), { targets: { webhookId: hook.body.id } });
    t.match(byId('testWebhook', 202), { targets: { webhookId: hook.body.id, deliveryId: test.body.deliveryId } });
    t.same(byId('deleteWebhook', 404).targets, {}, 'an id the service did not make is not kept');
    t.ok(
      mine.items.every((r) => r.clientAddress === '127.0.0.1'),
      'the client address',
    );
    const ordered = mine.items.map((r) => r.at);
    t.same(ordered, [...ordered].sort().reverse(), 'newest first');

    t.same((await service.get('/audit', { key: KEY_B })).body.items, [], 'another tenant sees none of them');
    const operator = await readAll(service, '/admin/audit?limit=50', AUDIT_ADMIN_KEY);
    t.ok(
      requested.every((r) => operator.items.some((record) => record.requestId === r.requestId)),
      'operators see every record',
    );
    t.match(
      operator.items.find((r) => r.action === 'resendAdminDelivery'),
      {
        actor: 'operator',
        tenant: sha256Hex(KEY_A),
        targets: { deliveryId: test.body.deliveryId, webhookId: hook.body.id },
        outcome: { status: 202 },
      },
      'the operator action, for the tenant it concerned',
    );
    const filtered = await service.get(`/admin/audit?tenant=${sha256Hex(KEY_A)}&action=postFacture`, {
      key: null,
      headers: { authorization: `Bearer ${AUDIT_ADMIN_KEY}` },
    });
    t.same(
      filtered.body.items.map((r: { outcome: { status: number } }) => r.outcome.status).sort(),
      [202, 400],
      'filtered by tenant and action',
    );
    const none = await service.get(`/audit?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    t.same(none.body.items, [], 'filtered by time');

    const stored = JSON.stringify(await service.kernel.store.collection('audit').find({}));
    t.ok(
      requested.every((r) => stored.includes(r.requestId)),
      'the scan reads the records themselves',
    );
    for (const [what, text] of Object.entries({
      ...MARKS,
      'the API key': KEY_A,
      'the secret': hook.body.secret,
      'the rotated secret': '',
    })) {
      if (text) t.notOk(stored.includes(text), `no ${what} in the audit collection`);
    }
    t.notOk(stored.includes(hook.body.signingSecret), 'no signing secret');
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    t.match(
      metrics,
      /opco_proxy_audit_records_total\{action="postDossier",status="202"\} 1\b/,
      'records counted by action and outcome',
    );
    t.match(metrics, /opco_proxy_audit_records_total\{action="postDossier",status="200"\} 1\b/);
    t.match(metrics, /opco_proxy_audit_records_total\{action="deleteWebhook",status="404"\} 1\b/);
  });

  t.test('records older than audit.retentionDays are purged by the periodic task', async (t) => {
    const clock = new TestClock();
    const service = await startService({
      clock,
      config: { ...backends(), audit: { retentionDays: 2, sweepIntervalMs: 60_000 } },
    });
    t.teardown(() => service.close());
    const created = await service.request('POST', '/webhooks', {
      body: { callbackUrl: 'http://127.0.0.1:9/old', events: ['job.completed'] },
    });
    t.equal(created.status, 201);
    const hook = created.body;
    await clock.advance(86_400_000);
    t.equal((await service.request('DELETE', `/webhooks/${hook.id}`)).status, 200);
    t.same(
      (await service.get('/audit')).body.items.map((r: { action: string }) => r.action),
      ['deleteWebhook', 'createWebhook'],
    );
    await clock.advance(86_400_000 + 60_000);
    await eventually(
      async () => (await service.get('/audit')).body.items.length === 1,
      'the purge of the record two days old',
    );
    t.same(
      (await service.get('/audit')).body.items.map((r: { action: string }) => r.action),
      ['deleteWebhook'],
      'the younger one is kept',
    );
  });

  t.test("opco-proxy audit export prints a period's records as JSON Lines, read from the store", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'opco-audit-'));
    const config = { ...(backends() ?? { store: { type: 'embedded', path: join(dir, 'store') } }) };
    const service = await startService({ config });
    const before = new Date().toISOString();
    const created = await service.request('POST', '/webhooks', {
      body: { callbackUrl: 'http://127.0.0.1:9/export', events: ['job.completed'] },
      headers: { 'x-request-id': 'export-1' },
    });
    t.equal(created.status, 201);
    t.equal(
      (
        await service.request('DELETE', `/webhooks/${created.body.id}`, {
          key: KEY_B,
          headers: { 'x-request-id': 'export-2' },
        })
      ).status,
      404,
      "another tenant's webhook: refused, and recorded",
    );
    await service.close();
    const file = writeConfig({ ...config, opcos: {} });
    const run = (args: string[]) =>
      execFileAsync(process.execPath, [CLI, 'audit', 'export', '--config', file, ...args], {
        env: { ...process.env, OPCO_PROXY_CONFIG: '' },
      });
    const all = await run(['--since', before]);
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { requestId: string; tenant: string; action: string });
    t.same(
      lines.map((r) => [r.requestId, r.action]),
      [
        ['export-1', 'createWebhook'],
        ['export-2', 'deleteWebhook'],
      ],
      'oldest first',
    );
    t.match(all.stderr, /2 audit records exported/);
    const one = await run(['--since', before, '--tenant', sha256Hex(KEY_B)]);
    t.same(
      one.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).requestId),
      ['export-2'],
      "one tenant's",
    );
    t.equal((await run(['--since', new Date(Date.now() + 60_000).toISOString()])).stdout, '', 'nothing after now');
    const refused = await run(['--since', 'last tuesday']).catch((err: { code: number; stderr: string }) => err);
    t.match(refused, { code: 1, stderr: /--since: not a date/ });
  });

  t.test('with audit.reads, reads of personal data are recorded, cached ones too', async (t) => {
    const service = await startService({ config: { ...backends(), audit: { reads: true } } });
    t.teardown(() => service.close());
    const numero = service.sandbox.dataset.dossiers[1].numeroInterne;
    for (let i = 0; i < 3; i++) t.equal((await service.get(`/sandbox/dossiers?numeroInterne=${numero}`)).status, 200);
    t.equal((await service.get(`/sandbox/dossiers/liste?numerosInternes=${numero}`)).status, 200);
    t.equal((await service.get('/sandbox/dossiers/etats')).status, 200, 'not personal data: not recorded');
    const items = (await service.get('/audit')).body.items as Array<{ action: string }>;
    t.same(items.map((r) => r.action).sort(), ['getDossier', 'getDossier', 'getDossier', 'listDossiers']);
  });
}

async function readAll(service: Service, first: string, adminKey?: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let path: string | undefined = first;
  let pages = 0;
  while (path) {
    const reply = await service.get(
      path,
      adminKey ? { key: null, headers: { authorization: `Bearer ${adminKey}` } } : {},
    );
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
    items.push(...reply.body.items);
    pages += 1;
    path = /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1];
  }
  return { items, pages };
}
