/**
 * The jobs behaviours every backend pair must show (issue: async jobs), run on the embedded
 * backends and on MongoDB + RabbitMQ by two test files, and in front of either upstream shape
 * (common-api by default, classic-api by classic-jobs.test.ts).
 */
import type { Test } from 'tap';
import { tenantHash, type DomainEvent } from '@opco-proxy/core';
import { startService, KEY_A, KEY_B, type Service, type ServiceOptions } from './harness.js';
import { emitted, eventually } from './eventually.js';
import {
  PDF,
  certificatBody,
  conventionBody,
  documentBody,
  dossierBody,
  factureBody,
  waitForJob,
} from './jobs-client.js';
import { COMMON, type UpstreamShape } from './upstream-shapes.js';

/** The operator key of the suite's service: its operators retry failed jobs (P23). */
const JOBS_ADMIN_KEY = 'jobs-suite-operator-key-0123456789abcdef';

export function jobsSuite(t: Test, backend: () => ServiceOptions, shape: UpstreamShape = COMMON): void {
  let service: Service;
  const events: DomainEvent[] = [];
  const { paths, parts } = shape;
  const at = (route: string) => `/${shape.opcoId}/${route}`;
  t.before(async () => {
    const options = backend();
    service = await startService({
      ...options,
      events,
      opcoId: shape.opcoId,
      sandbox: { ...options.sandbox, shape: shape.sandbox },
      opco: { adapter: shape.adapter, rateLimit: shape.rateLimit },
      opcos: { other: { adapter: shape.adapter } },
      config: { ...options.config, jobs: { backoffMs: [100, 200, 400] } },
      env: { ...options.env, OPCO_PROXY_ADMIN_KEY: JOBS_ADMIN_KEY },
    });
  });
  t.teardown(() => service.close());
  t.afterEach(() => service.sandbox.faults.clear());
  const numero = () => service.sandbox.dataset.dossiers[0].numeroInterne;
  const posted = (path: string) => service.sandbox.received.filter((r) => r.method === 'POST' && r.path === path);
  /** The JSON metadata part of a multipart request, in the service's names. */
  const metadataOf = (wire: { parts?: Array<{ name: string; content: Buffer }> }, part: string) =>
    shape.canonical(JSON.parse(wire.parts!.find((p) => p.name === part)!.content.toString('utf8')));

  t.test('POST /dossiers reaches the upstream as JSON with the profile transforms', async (t) => {
    const body = dossierBody();
    const reply = await service.request('POST', at('dossiers'), { body });
    t.equal(reply.status, 202, reply.text);
    t.match(reply.body.jobId, /^[0-9a-f-]{36}$/);
    t.equal(reply.body.status, 'pending');
    t.equal(reply.body.statusUrl, `/${shape.opcoId}/jobs/${reply.body.jobId}`);
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed', JSON.stringify(job));
    t.equal(job.type, 'post-dossier');
    t.equal(job.retries, 0);
    t.ok(job.startedAt && job.completedAt);
    t.match(job.result.numeroInterne, /\S/);
    if (shape.answersStates) t.equal(job.result.etat, 'TRANSMIS', "the answer in the SPEC's words");
    const wire = posted(paths.postDossier).find(
      (r) => shape.canonical(r.json)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    )!;
    t.ok(wire, 'upstream received the dossier');
    shape.checkDossierSent(t, (wire.json as any).cerfa);
    t.equal(wire.headers['x-api-key'], KEY_A);
  });

  t.test('factures, conventions, certificats and documents go multipart with their part names', async (t) => {
    const cases: Array<[string, Record<string, unknown>, string | undefined, string | undefined]> = [
      [
        'factures',
        { ...factureBody(numero()), _files: { facture: PDF.toString('base64') } },
        paths.factures,
        parts.factures,
      ],
      ['conventions', conventionBody(numero()), paths.conventions, parts.conventions],
      ['certificats', certificatBody(numero()), paths.certificats, parts.certificats],
      ['documents', documentBody(numero()), paths.documents, parts.documents],
    ];
    for (const [route, body, upstreamPath, part] of cases) {
      if (!upstreamPath || !part) {
        const refused = await service.request('POST', at(route), { body });
        t.equal(refused.status, 501, `${route}: not supported by ${shape.adapter}`);
        t.equal(refused.body.code, 'NOT_SUPPORTED');
        continue;
      }
      const before = posted(upstreamPath).length;
      const reply = await service.request('POST', at(route), { body });
      t.equal(reply.status, 202, reply.text);
      const job = await waitForJob(service, reply.body.statusUrl);
      t.equal(job.status, 'completed', `${route}: ${JSON.stringify(job.error)}`);
      t.equal(job.type, `post-${route.replace(/s$/, '')}`);
      const wire = posted(upstreamPath)[before];
      t.ok(wire?.parts, `${route} sent multipart`);
      const metadata = wire.parts!.find((p) => p.name === part)!;
      t.ok(metadata, `${route}: metadata part "${part}"`);
      const json = JSON.parse(metadata.content.toString('utf8'));
      t.notOk('_files' in json, 'files are not in the metadata');
      if (route === 'conventions') shape.checkConventionSent(t, json);
      if (route === 'certificats') t.equal(json.apprenti.prenom, 'ANNE');
      if (route === 'factures')
        t.equal(shape.canonical(json).dateEmission, '2024-10-15', 'the emission date as the upstream writes dates');
      if (route === 'factures' && shape.answersStates)
        t.equal(job.result.etatFacture, 'TRANSMIS', "the answer in the SPEC's words");
      const expectedFiles = Object.keys((body._files as object) ?? {}).length;
      const fileParts = wire.parts!.filter((p) => p.name !== part);
      t.equal(fileParts.length, expectedFiles, `${route}: file parts`);
      for (const file of fileParts) t.same(file.content, PDF, 'file bytes intact');
    }
  });

  t.test('invalid bodies give 400 with the spec messages and create nothing', async (t) => {
    const broken = dossierBody();
    delete broken.cerfa.apprenti.nom;
    broken.cerfa.contrat.dateDebutContrat = '2024-13-45';
    const reply = await service.request('POST', at('dossiers'), { body: broken });
    t.equal(reply.status, 400);
    t.equal(reply.body.code, 'VALIDATION_ERROR');
    t.ok(reply.body.errors.includes('cerfa.apprenti.nom: Required'), reply.text);
    t.ok(reply.body.errors.includes('cerfa.contrat.dateDebutContrat: Invalid date'), reply.text);
    const badFile = await service.request('POST', at('documents'), {
      body: { ...documentBody(numero()), _files: { convention: 'not base64!!' } },
    });
    t.equal(badFile.status, 400);
    t.match(badFile.text, /convention/, 'names the role');
    const noLines = await service.request('POST', at('factures'), { body: { ...factureBody(numero()), lignes: [] } });
    t.equal(noLines.status, 400);
    const unknown = await service.request('POST', '/nowhere/dossiers', { body: dossierBody() });
    t.equal(unknown.status, 404);
  });

  t.test('an Idempotency-Key seen before answers 200 duplicate with the same job', async (t) => {
    const key = `idem-${Date.now()}`;
    const body = factureBody(numero());
    const first = await service.request('POST', at('factures'), { body, headers: { 'Idempotency-Key': key } });
    t.equal(first.status, 202);
    const again = await service.request('POST', at('factures'), { body, headers: { 'Idempotency-Key': key } });
    t.equal(again.status, 200);
    t.same(again.body, { jobId: first.body.jobId, status: 'duplicate', statusUrl: first.body.statusUrl });
    const changed = await service.request('POST', at('factures'), {
      body: { ...body, montantTotal: 1 },
      headers: { 'Idempotency-Key': key },
    });
    t.equal(changed.status, 200);
    t.equal(changed.body.jobId, first.body.jobId);
    t.equal(changed.body.warning, 'payload differs from the original request');
    const otherTenant = await service.request('POST', at('factures'), {
      key: KEY_B,
      body,
      headers: { 'Idempotency-Key': key },
    });
    t.equal(otherTenant.status, 202, 'keys are per tenant');
    t.not(otherTenant.body.jobId, first.body.jobId);
    await waitForJob(service, first.body.statusUrl);
    await waitForJob(service, otherTenant.body.statusUrl, { key: KEY_B });
    const tooLong = await service.request('POST', at('factures'), {
      body,
      headers: { 'Idempotency-Key': 'k'.repeat(256) },
    });
    t.equal(tooLong.status, 400);
  });

  t.test('concurrent requests with one Idempotency-Key create exactly one job', async (t) => {
    const key = `race-${Date.now()}`;
    const body = factureBody(numero());
    body.numero = key;
    const replies = await Promise.all(
      Array.from({ length: 12 }, () =>
        service.request('POST', at('factures'), { body, headers: { 'Idempotency-Key': key } }),
      ),
    );
    const created = replies.filter((r) => r.status === 202);
    t.equal(created.length, 1, replies.map((r) => r.status).join(','));
    t.ok(
      replies.every((r) => r.body.jobId === created[0].body.jobId),
      'all point at one job',
    );
    await waitForJob(service, created[0].body.statusUrl);
    const sent = posted(paths.factures).filter((r) =>
      r.parts?.some((p) => p.name === parts.factures && p.content.toString().includes(key)),
    );
    t.equal(sent.length, 1, 'the upstream got it once');
  });

  t.test('a job is visible only to its tenant', async (t) => {
    const reply = await service.request('POST', at('factures'), { body: factureBody(numero()) });
    await waitForJob(service, reply.body.statusUrl);
    t.equal((await service.request('GET', reply.body.statusUrl, { key: KEY_B })).status, 404);
    t.equal((await service.request('GET', `/other/jobs/${reply.body.jobId}`)).status, 404);
    t.equal((await service.request('GET', at('jobs/not-a-uuid'))).status, 404);
    t.equal((await service.request('GET', reply.body.statusUrl, { key: null })).status, 403);
  });

  t.test('a retryable error is retried and the job completes', async (t) => {
    service.sandbox.faults.add({ route: `POST ${paths.factures}`, status: 503, times: 1 });
    const reply = await service.request('POST', at('factures'), { body: factureBody(numero()) });
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed', JSON.stringify(job));
    t.equal(job.retries, 1);
  });

  t.test('a 4xx fails at once, with the upstream body, and is not retried', async (t) => {
    const before = posted(paths.factures).length;
    service.sandbox.faults.add({
      route: `POST ${paths.factures}`,
      status: 422,
      body: { message: 'montant incohérent' },
      times: 5,
    });
    const reply = await service.request('POST', at('factures'), { body: factureBody(numero()) });
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'failed');
    t.equal(job.retries, 0);
    t.equal(job.error.code, 'UPSTREAM_ERROR');
    t.same(job.error.upstream, { message: 'montant incohérent' });
    t.equal(posted(paths.factures).length - before, 1, 'one call only');
  });

  t.test('retryable errors exhaust after exactly 3 attempts', async (t) => {
    const before = posted(paths.factures).length;
    service.sandbox.faults.add({ route: `POST ${paths.factures}`, status: 500, times: 3 });
    const reply = await service.request('POST', at('factures'), { body: factureBody(numero()) });
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'failed');
    t.equal(job.retries, 2, 'two retries after the first attempt');
    t.equal(job.error.code, 'UPSTREAM_ERROR');
    t.equal(posted(paths.factures).length - before, 3, 'exactly 3 upstream attempts');
    const metrics = await service.get('/metrics', { key: null });
    t.match(
      metrics.text,
      new RegExp(`opco_proxy_jobs_ended_total\\{opco="${shape.opcoId}",type="post-facture",status="failed"\\} [1-9]`),
      'counted for operators',
    );
    const failed = await emitted(events, 'job.failed', { jobId: job.jobId });
    t.same(Object.keys(failed.data).sort(), ['error', 'jobId', 'retries', 'status', 'type']);
    t.equal(failed.data.retries, 2);
  });

  t.test('an operator retries the jobs an outage failed: each sent once more, audited once (P23)', async (t) => {
    const admin = (method: string, path: string, body?: unknown) =>
      service.request(method, path, { key: null, headers: { authorization: `Bearer ${JOBS_ADMIN_KEY}` }, body });
    const sent = (numeroExterne: string) =>
      posted(paths.postDossier).filter((r) => shape.canonical(r.json)?.cerfa?.numeroExterne === numeroExterne).length;
    const since = new Date().toISOString();
    service.sandbox.faults.add({ route: `POST ${paths.postDossier}`, status: 503 });
    const bodies = [dossierBody(), dossierBody()];
    const replies = await Promise.all(bodies.map((body) => service.request('POST', at('dossiers'), { body })));
    const [first, second] = replies.map((reply) => reply.body.jobId as string);
    for (const reply of replies) t.equal((await waitForJob(service, reply.body.statusUrl)).status, 'failed');
    service.sandbox.faults.clear();
    const opened = await admin('GET', `/admin/jobs/${first}`);
    t.equal(opened.status, 200);
    t.match(opened.body, {
      job: { status: 'failed' },
      steps: [{ status: 'failed', attempts: 3 }],
      retry: { possible: true },
    });
    const tries = bodies.map((body) => sent(body.cerfa.numeroExterne));
    t.same(tries, [3, 3], 'three attempts each during the outage');

    t.equal((await admin('POST', `/admin/jobs/${first}/retry`)).status, 202);
    const bulk = await admin('POST', '/admin/jobs/retry', {
      opcoId: shape.opcoId,
      code: 'UPSTREAM_ERROR',
      failedSince: since,
    });
    t.equal(bulk.status, 200);
    t.same(bulk.body.jobIds, [second], 'the other one; the first is pending already');
    for (const reply of replies) {
      const job = await waitForJob(service, reply.body.statusUrl, { until: (j) => j.status === 'completed' });
      t.equal(job.jobId, reply.body.jobId, 'the same job, completed');
    }
    t.same(
      bodies.map((body) => sent(body.cerfa.numeroExterne)),
      tries.map((n) => n + 1),
      'one upstream submission each after the outage',
    );
    for (const [jobId, action] of [
      [first, 'retryAdminJob'],
      [second, 'retryAdminJobs'],
    ]) {
      const audit = await admin('GET', `/admin/audit?jobId=${jobId}&actor=operator`);
      t.match(audit.body.items, [{ action, targets: { jobId } }], `one audit record for ${action}`);
      t.equal(audit.body.items.length, 1);
    }
  });

  t.test('a dossier with files is a composite job: dossier then one document per file', async (t) => {
    const body = dossierBody({
      _files: { cerfa: PDF.toString('base64'), convention: Buffer.from('%PDF-convention').toString('base64') },
    });
    service.sandbox.faults.add({ route: `POST ${paths.documents}`, status: 502, times: 1 });
    const reply = await service.request('POST', at('dossiers'), { body });
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed', JSON.stringify(job));
    t.equal(job.totalSteps, 3);
    t.equal(job.currentStep, 3);
    t.same(
      job.steps.map((s: any) => [s.step, s.name, s.status]),
      [
        [1, 'dossier', 'completed'],
        [2, 'document:cerfa', 'completed'],
        [3, 'document:convention', 'completed'],
      ],
    );
    t.equal(job.retries, 1, 'the failed document step was retried');
    const dossierCalls = posted(paths.postDossier).filter(
      (r) => shape.canonical(r.json)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    );
    t.equal(dossierCalls.length, 1, 'the completed dossier step was not re-run by the retry');
    const documents = posted(paths.documents).filter((r) =>
      r.parts?.some((p) => p.name === parts.documents && p.content.toString().includes(job.result.numeroInterne)),
    );
    t.equal(documents.length, 3, 'two documents, one of them retried');
    const info = metadataOf(documents.at(-1)!, parts.documents);
    t.same(info, { typeFichier: 'convention', objets: [{ typeObjet: 'dossier', idObjet: job.result.numeroInterne }] });
    // The job is seen ended once its last step is recorded; that step's progress event and then
    // job.completed follow it: wait for the last of them before reading the progress events.
    const completed = await emitted(events, 'job.completed', { jobId: job.jobId });
    const progress = events.filter((e) => e.type === 'job.progress' && e.data.jobId === job.jobId);
    t.same(
      progress.map((e) => [e.data.step, e.data.name, e.data.status, e.data.totalSteps]),
      [
        [1, 'dossier', 'completed', 3],
        [2, 'document:cerfa', 'completed', 3],
        [3, 'document:convention', 'completed', 3],
      ],
    );
    t.same(Object.keys(completed.data).sort(), ['completedAt', 'jobId', 'result', 'status', 'type']);
    t.equal(completed.tenant, tenantHash(KEY_A), 'the tenant hash, not the key');
  });

  t.test('the store holds no plaintext key, body or file, and files are purged at the end', async (t) => {
    const secretKey = `dump-check-key-${Date.now()}`;
    const marker = Buffer.from(`%PDF-unique-marker-${Date.now()}`);
    service.sandbox.faults.add({ route: `POST ${paths.documents}`, latencyMs: 600, times: 1 });
    const reply = await service.request('POST', at('documents'), {
      key: secretKey,
      body: { ...documentBody(numero()), _files: { convention: marker.toString('base64') } },
    });
    t.equal(reply.status, 202);
    await waitForJob(service, reply.body.statusUrl, { key: secretKey, until: (job) => job.status === 'processing' });
    const dump = JSON.stringify(
      await Promise.all(
        ['jobs', 'job_secrets', 'job_files', 'idempotency_keys'].map((name) =>
          service.kernel.store.collection(name).find({}),
        ),
      ),
    );
    t.notOk(dump.includes(secretKey), 'no plaintext API key');
    t.notOk(dump.includes(marker.toString('base64')) || dump.includes(marker.toString('utf8')), 'no plaintext file');
    t.ok(
      (await service.kernel.store.collection('job_files').count({ jobId: reply.body.jobId })) > 0,
      'the sealed file is there while the job runs',
    );
    await waitForJob(service, reply.body.statusUrl, { key: secretKey });
    // The job is recorded as ended first (so a crash in between never loses its outcome), then purged.
    const left = async () =>
      (await service.kernel.store.collection('job_files').count({ jobId: reply.body.jobId })) +
      (await service.kernel.store.collection('job_secrets').count({ _id: reply.body.jobId })) +
      (await service.kernel.store.collection('jobs').count({ _id: reply.body.jobId, inputs: { $exists: true } }));
    await eventually(async () => (await left()) === 0, 'the files and the key purged once the job ended');
    t.equal(await left(), 0, 'files and key purged');
  });

  t.test('a queue that refuses the job: 503 UNAVAILABLE and nothing is kept', async (t) => {
    const broken = await startService({
      ...backend(),
      upstream: service.sandbox,
      opcoId: shape.opcoId,
      opco: { adapter: shape.adapter, rateLimit: shape.rateLimit },
    });
    t.teardown(() => broken.close());
    await broken.kernel.queue.close();
    const reply = await broken.request('POST', at('factures'), {
      body: factureBody(numero()),
      headers: { 'Idempotency-Key': 'refused-1' },
    });
    t.equal(reply.status, 503, reply.text);
    t.equal(reply.body.code, 'UNAVAILABLE');
    for (const name of ['jobs', 'job_secrets', 'job_files', 'idempotency_keys']) {
      t.equal(await broken.kernel.store.collection(name).count({}), 0, `${name} left empty`);
    }
    t.equal((await broken.get('/ready', { key: null })).status, 503, '/ready says so');
  });
}
