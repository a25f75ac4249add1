// Submission of asynchronous POSTs (SPEC 1 rule 3, 3.1, 4.0.4; D15, D32): nothing is half-accepted. A 202
// leaves only once the job, its sealed inputs, its queue message and its audit record are stored; a
// refused request stores nothing; a reused Idempotency-Key answers the same job and creates no other.
import t from 'tap';
import { createEmbeddedQueue, tenantHash } from '@opco-proxy/core';
import { AUDIT_COLLECTION } from '@opco-proxy/core/application';
import jobsPlugin from '../src/index.js';
import { kindOfOperation } from '../src/job-plan.js';
import { toResource } from '../src/job-records.js';
import { JOBS_QUEUE, submitJob } from '../src/submission.js';
import { KEY, OPCO, OTHER_OPCO, factureBody, startJobsKernel, type JobsKernel } from './fixtures/jobs-kernel.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const facture = factureBody();
const IBAN = facture.ibanEmetteur;
const FACTURE = kindOfOperation('postFacture');

/** What the submission left in the store and the queue. */
async function stored(jobs: JobsKernel) {
  return {
    jobs: await jobs.store.collection('jobs').count({}),
    files: await jobs.store.collection('job_files').count({}),
    keys: await jobs.store.collection('idempotency_keys').count({}),
    queued: (await jobs.queue.depth(JOBS_QUEUE)).ready,
  };
}

t.test('a 202 answers once the pending job, its sealed inputs and its queue message are stored', async (t) => {
  const jobs = await startJobsKernel(t);
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const request = { requestId: 'req-1', traceparent };
  const accepted = await submitJob(jobs.submission, FACTURE, OPCO, jobs.tenant, facture, request);
  t.equal(accepted.status, 202);
  t.match(accepted.body.jobId, UUID);
  const { jobId } = accepted.body;
  t.same(accepted.body, { jobId, status: 'pending', statusUrl: `/${OPCO}/jobs/${jobId}` });

  const job = (await jobs.records.get(jobId))!;
  t.match(job, {
    tenant: tenantHash(KEY),
    opcoId: OPCO,
    type: 'post-facture',
    status: 'pending',
    retries: 0,
    startedAt: null,
    completedAt: null,
    leaseOwner: null,
    requestId: 'req-1',
    traceparent,
  });
  t.same(job.createdAt, jobs.clock.date());
  t.ok(job.nextAttemptAt.getTime() <= jobs.clock.now(), 'due at once');
  t.same(job.steps, [{ step: 1, name: 'facture', status: 'pending', attempts: 0 }]);
  t.same(
    toResource(job),
    {
      jobId,
      opcoId: OPCO,
      type: 'post-facture',
      status: 'pending',
      retries: 0,
      createdAt: jobs.clock.date().toISOString(),
      startedAt: null,
      completedAt: null,
    },
    'SPEC 2.5 as GET /jobs shows it',
  );
  const raw = JSON.stringify(job);
  for (const clear of [KEY, IBAN, facture.numero]) t.notOk(raw.includes(clear), `SPEC 5.4: no ${clear} in the record`);
  const opened = (await jobs.secrets.open(job))!;
  t.equal(opened.apiKey, KEY, 'the sealed key opens for the worker');
  t.same(opened.body, facture);
  t.same(await stored(jobs), { jobs: 1, files: 0, keys: 0, queued: 1 }, 'its id queued; no key kept without a header');
});

t.test('_files are sealed apart with their bytes counted, and left out of the stored body', async (t) => {
  const jobs = await startJobsKernel(t);
  const cerfa = { numeroExterne: 'EXT-1' };
  const files = { cerfa: [Buffer.from('%PDF-'), Buffer.from('cerfa')], convention: [Buffer.from('%PDF-conv')] };
  const dossier = kindOfOperation('postDossier');
  const { body } = await submitJob(jobs.submission, dossier, OPCO, jobs.tenant, { cerfa, _files: files });
  const job = (await jobs.records.get(body.jobId))!;
  t.equal(job.fileBytes, 19, 'the decoded size of every file');
  t.same(
    job.steps.map((step) => step.name),
    ['dossier', 'document:cerfa', 'document:convention'],
    'D16',
  );
  const opened = (await jobs.secrets.open(job))!;
  t.same(opened.body, { cerfa }, 'the body kept without _files');
  t.same(Object.keys(opened.files).sort(), ['cerfa', 'convention']);
  t.equal(Buffer.concat(opened.files.cerfa).toString(), '%PDF-cerfa');
  t.same(await stored(jobs), { jobs: 1, files: 2, keys: 0, queued: 1 });
  const kept = JSON.stringify(await jobs.store.collection('job_files').find({}));
  t.notOk(kept.includes('PDF') || kept.includes(Buffer.from('%PDF-').toString('base64')), 'files sealed at rest');
});

t.test('D15: a reused Idempotency-Key answers 200 duplicate with the same job, and stores nothing more', async (t) => {
  const jobs = await startJobsKernel(t);
  const submit = (body: Record<string, unknown>, tenant = jobs.tenant) =>
    submitJob(jobs.submission, FACTURE, OPCO, tenant, body, { idempotencyKey: 'key-1' });
  const first = await submit(facture);
  t.equal(first.status, 202);
  const { jobId } = first.body;
  const again = await submit({ ...facture });
  t.same(again, { status: 200, body: { jobId, status: 'duplicate', statusUrl: `/${OPCO}/jobs/${jobId}` } });
  const changed = await submit({ ...facture, montantTotal: 1 });
  const warning = 'payload differs from the original request';
  t.same(changed, { status: 200, body: { ...again.body, warning } }, 'the same job, with a warning');
  t.same(await stored(jobs), { jobs: 1, files: 0, keys: 1, queued: 1 }, 'one job, one message');

  const other = { hash: tenantHash('another-cfa-key-2'), apiKey: 'another-cfa-key-2' };
  const theirs = await submit(facture, other);
  t.equal(theirs.status, 202, 'keys are scoped to the tenant');
  t.not(theirs.body.jobId, jobId);

  await jobs.clock.advance(24 * 3600_000);
  const later = await submit(facture);
  t.equal(later.status, 202, 'kept 24 hours');
  t.not(later.body.jobId, jobId);
  t.equal((await stored(jobs)).jobs, 3);
});

t.test('D15: a key reused at another opcoId points at the job that holds it, and warns', async (t) => {
  const jobs = await startJobsKernel(t);
  const first = await submitJob(jobs.submission, FACTURE, OPCO, jobs.tenant, facture, { idempotencyKey: 'key-1' });
  const { jobId } = first.body;
  const elsewhere = await submitJob(jobs.submission, FACTURE, OTHER_OPCO, jobs.tenant, facture, {
    idempotencyKey: 'key-1',
  });
  t.same(
    elsewhere,
    {
      status: 200,
      body: {
        jobId,
        status: 'duplicate',
        statusUrl: `/${OPCO}/jobs/${jobId}`,
        warning: 'payload differs from the original request',
      },
    },
    `the status URL of the job (at ${OPCO}), where it is found`,
  );
  t.same(await stored(jobs), { jobs: 1, files: 0, keys: 1, queued: 1 }, 'nothing was sent to the other opcoId');
});

t.test('a request the submission refuses stores nothing', async (t) => {
  const jobs = await startJobsKernel(t);
  const convention = kindOfOperation('postConvention');
  const refusals = [
    ['an empty Idempotency-Key', OPCO, FACTURE, '', { code: 'VALIDATION_ERROR', status: 400 }],
    ['a key over 255 characters', OPCO, FACTURE, 'k'.repeat(256), { code: 'VALIDATION_ERROR', status: 400 }],
    ['an unknown opcoId', 'nowhere', FACTURE, 'k', { code: 'NOT_FOUND', status: 404 }],
    ['a route the profile does not support', OPCO, convention, 'k', { code: 'NOT_SUPPORTED', status: 501 }],
  ] as const;
  for (const [why, opcoId, kind, idempotencyKey, error] of refusals) {
    await t.rejects(submitJob(jobs.submission, kind, opcoId, jobs.tenant, facture, { idempotencyKey }), error, why);
  }
  t.same(await stored(jobs), { jobs: 0, files: 0, keys: 0, queued: 0 });
});

t.test('SPEC 3.1: a queue that refuses the job leaves nothing stored and answers 503 UNAVAILABLE', async (t) => {
  const jobs = await startJobsKernel(t);
  const closed = createEmbeddedQueue({ clock: jobs.clock });
  await closed.close();
  const body = { cerfa: { numeroExterne: 'EXT-1' }, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } };
  const request = { idempotencyKey: 'key-1' };
  const dossier = kindOfOperation('postDossier');
  const refused = submitJob({ ...jobs.submission, queue: closed }, dossier, OPCO, jobs.tenant, body, request);
  await t.rejects(refused, { code: 'UNAVAILABLE', status: 503 });
  t.same(await stored(jobs), { jobs: 0, files: 0, keys: 0, queued: 0 }, 'job, files and key removed');
  const retried = await submitJob(jobs.submission, dossier, OPCO, jobs.tenant, body, request);
  t.equal(retried.status, 202, "the key was released: the client's retry is a new job");
});

t.test('through the route: a body that fails validation is 400 VALIDATION_ERROR and stores no job', async (t) => {
  const jobs = await startJobsKernel(t, { plugins: [jobsPlugin], role: 'api' });
  const url = await jobs.kernel.listen(0, '127.0.0.1');
  const response = await fetch(`${url}/${OPCO}/factures`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'idempotency-key': 'key-1' },
    body: JSON.stringify({ ...facture, lignes: [], dateEmission: 'le 15' }),
  });
  t.equal(response.status, 400);
  const error = (await response.json()) as { code: string; errors: string[] };
  t.equal(error.code, 'VALIDATION_ERROR');
  t.ok(error.errors.length >= 2, 'one entry per field problem');
  t.match(error.errors.join('\n'), /dateEmission/);
  t.match(error.errors.join('\n'), /lignes/);
  t.same(await stored(jobs), { jobs: 0, files: 0, keys: 0, queued: 0 });
  t.match(
    await jobs.store.collection<any>(AUDIT_COLLECTION).find({}),
    [
      {
        action: 'postFacture',
        targets: {},
        outcome: { status: 400, code: 'VALIDATION_ERROR' },
      },
    ],
    'D32: the refusal audited, with no job to name',
  );
});

t.test('D32: through the route, the audit record is stored before the 202 or the duplicate 200 leaves', async (t) => {
  const jobs = await startJobsKernel(t, { plugins: [jobsPlugin], role: 'api' });
  const url = await jobs.kernel.listen(0, '127.0.0.1');
  const post = () =>
    fetch(`${url}/${OPCO}/factures`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'idempotency-key': 'key-1' },
      body: JSON.stringify(facture),
    });
  const audit = jobs.store.collection<any>(AUDIT_COLLECTION);

  const first = await post();
  t.equal(first.status, 202);
  const { jobId } = (await first.json()) as { jobId: string };
  t.match(await audit.find({}), [
    {
      tenant: tenantHash(KEY),
      actor: 'tenant',
      action: 'postFacture',
      opcoId: OPCO,
      targets: { jobId },
      outcome: { status: 202, idempotency: 'new' },
    },
  ]);
  t.equal((await jobs.records.get(jobId))?.status, 'pending', 'the job is stored');
  t.ok((await jobs.records.get(jobId))?.inputs, 'with its sealed inputs');

  const second = await post();
  t.equal(second.status, 200);
  t.match(await second.json(), { jobId, status: 'duplicate' });
  const records = await audit.find({});
  t.equal(records.length, 2);
  const duplicate = { action: 'postFacture', targets: { jobId }, outcome: { status: 200, idempotency: 'duplicate' } };
  t.match(
    records.filter((record) => record.outcome.status === 200),
    [duplicate],
  );
  const raw = JSON.stringify(records);
  for (const clear of [KEY, IBAN]) t.notOk(raw.includes(clear), `no ${clear} in the audit`);
  t.same(await stored(jobs), { jobs: 1, files: 0, keys: 1, queued: 1 });
});
