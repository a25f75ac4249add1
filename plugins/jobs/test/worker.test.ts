// The job worker (SPEC 3.1, 8; D16-D18) on a real kernel, store and queue, against a node:http upstream:
// steps run to completed, a 5xx is retried on the clock up to 3 attempts, a 4xx fails at once, and a step
// the upstream may already have taken is never sent again blindly.
import t from 'tap';
import { JobRecords, toResource } from '../src/job-records.js';
import { KEY, OPCO, factureBody, startJobsKernel, type JobsKernel } from './fixtures/jobs-kernel.js';

const DAY_MS = 24 * 3600_000;
/** SPEC 8: 3 attempts, backoff 1 s, 2 s, 4 s. */
const BACKOFF_MS = [1000, 2000, 4000];
const facture = factureBody();
const cerfa = { numeroExterne: 'EXT-1', numeroDeca: 'DECA-1', apprenti: { nom: 'DUPONT', prenom: 'LEA' } };
const ok = (body: Record<string, unknown>) => ({ status: 200, body: { status: 'success', ...body } });

const jobOf = async (jobs: JobsKernel, jobId: string) => (await jobs.records.get(jobId))!;
const stepsOf = async (jobs: JobsKernel, jobId: string) =>
  (await jobOf(jobs, jobId)).steps.map((step) => [step.name, step.status, step.attempts]);

t.test('a single-step job runs its step once to completed, stores the answer and tells job.completed', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /factures', ok({ numeroInterne: 'F-9' }));
  const jobId = await jobs.submit('postFacture', facture);
  const submittedAt = jobs.clock.date();
  await jobs.clock.advance(500);
  const { worker, ended } = jobs.worker();
  await worker.handle(jobId, false);

  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.same([job.createdAt, job.startedAt, job.completedAt], [submittedAt, jobs.clock.date(), jobs.clock.date()]);
  t.same(job.steps, [
    {
      step: 1,
      name: 'facture',
      status: 'completed',
      attempts: 1,
      uncertain: false,
      resultJson: '{"status":"success","numeroInterne":"F-9"}',
    },
  ]);
  t.same(toResource(job).result, { status: 'success', numeroInterne: 'F-9' }, 'result stored');
  t.equal(job.retries, 0);
  t.equal(job.inputs, undefined, 'the sealed inputs go with the write that ends the job');
  t.same(job.expiresAt, new Date(jobs.clock.now() + 30 * DAY_MS), 'D17: kept 30 days');
  const calls = jobs.upstream.callsTo('POST /factures');
  t.equal(calls.length, 1);
  t.equal(calls[0].headers['x-api-key'], KEY, "sent with the tenant's own key");
  t.match(calls[0].body, '"numero":"FAC-1"', 'the body submitted');
  const completed = jobs.events.filter((e) => e.type === 'job.completed');
  t.equal(completed.length, 1);
  t.match(completed[0].data, { jobId, type: 'post-facture', status: 'completed', result: { numeroInterne: 'F-9' } });
  t.same(ended, [{ opco: OPCO, type: 'post-facture', status: 'completed' }]);

  await worker.handle(jobId, true);
  t.equal(jobs.upstream.callsTo('POST /factures').length, 1, 'a message delivered again sends nothing');
  t.equal(jobs.events.filter((e) => e.type === 'job.completed').length, 1, 'nor tells the end twice');
});

t.test('D16: a dossier with files posts the dossier, then each file as a document of its numeroInterne', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /dossiers', ok({ numeroInterne: 'D-42' }));
  jobs.upstream.script('POST /documents', ok({ id: 'DOC' }));
  const files = { cerfa: [Buffer.from('%PDF-cerfa')], convention: [Buffer.from('%PDF-conv')] };
  const jobId = await jobs.submit('postDossier', { cerfa, _files: files });
  await jobs.worker().worker.handle(jobId, false);

  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.same(await stepsOf(jobs, jobId), [
    ['dossier', 'completed', 1],
    ['document:cerfa', 'completed', 1],
    ['document:convention', 'completed', 1],
  ]);
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, 1);
  t.notMatch(jobs.upstream.callsTo('POST /dossiers')[0].body, '%PDF', 'the dossier step carries no file');
  const documents = jobs.upstream.callsTo('POST /documents');
  t.equal(documents.length, 2, 'one call per file');
  for (const [index, role] of ['cerfa', 'convention'].entries()) {
    t.match(documents[index].body, `"typeFichier":"${role}"`);
    const attached = '"objets":[{"typeObjet":"dossier","idObjet":"D-42"}]';
    t.match(documents[index].body, attached, 'attached to the new dossier');
  }
  t.match(documents[0].body, '%PDF-cerfa');
  t.notMatch(documents[0].body, '%PDF-conv', 'each document step sends its own file only');
  const progress = jobs.events.filter((e) => e.type === 'job.progress').map((e) => [e.data.step, e.data.totalSteps]);
  t.same(
    progress,
    [
      [1, 3],
      [2, 3],
      [3, 3],
    ],
    'a job.progress after each step',
  );
  t.match(toResource(job).result, {
    numeroInterne: 'D-42',
    documents: [{ name: 'document:cerfa', result: { id: 'DOC' } }, { name: 'document:convention' }],
  });
  t.equal(await jobs.store.collection('job_files').count({ jobId }), 0, 'uploaded files purged at the end');
});

t.test('an upstream 5xx is retried after 1 s, then 2 s; the third failure fails the job: UPSTREAM_ERROR', async (t) => {
  const jobs = await startJobsKernel(t);
  t.same([jobs.config.attempts, jobs.config.backoffMs], [3, BACKOFF_MS], "the plugin's defaults are the spec's");
  jobs.upstream.script('POST /factures', { status: 503, body: { message: 'maintenance' } });
  const jobId = await jobs.submit('postFacture', facture);
  const { worker, ended } = jobs.worker();
  const posts = () => jobs.upstream.callsTo('POST /factures').length;

  await worker.handle(jobId, false);
  let job = await jobOf(jobs, jobId);
  t.equal(posts(), 1);
  t.equal(job.status, 'processing', 'SPEC 3.1: processing (re-run) while attempts remain');
  t.equal(job.retries, 1);
  t.match(job.steps[0], { status: 'failed', attempts: 1 });
  t.same(job.nextAttemptAt, new Date(jobs.clock.now() + BACKOFF_MS[0]), 'due again after 1 s');
  t.same(await jobs.depth(), { ready: 1, delayed: 1 }, "the submission's message, and the retry's waiting out 1 s");

  await jobs.clock.advance(BACKOFF_MS[0] - 1);
  await worker.handle(jobId, false);
  t.equal(posts(), 1, 'not sent again before its backoff has passed');
  await jobs.clock.advance(1);
  await worker.handle(jobId, false);
  job = await jobOf(jobs, jobId);
  t.equal(posts(), 2);
  t.equal(job.retries, 2);
  t.match(job.steps[0], { status: 'failed', attempts: 2 });
  t.same(job.nextAttemptAt, new Date(jobs.clock.now() + BACKOFF_MS[1]), 'then after 2 s');

  await jobs.clock.advance(BACKOFF_MS[1]);
  await worker.handle(jobId, false);
  job = await jobOf(jobs, jobId);
  t.equal(posts(), 3, 'SPEC 8: three attempts');
  t.equal(job.status, 'failed');
  t.equal(job.retries, 2, 'retries performed');
  t.match(job.steps[0], { status: 'failed', attempts: 3 });
  t.same(job.completedAt, jobs.clock.date());
  t.same(
    toResource(job).error,
    {
      message: 'upstream answered 503',
      code: 'UPSTREAM_ERROR',
      upstream: { message: 'maintenance' },
    },
    "the error stored, with the upstream's body",
  );
  const failed = jobs.events.filter((e) => e.type === 'job.failed');
  t.equal(failed.length, 1);
  t.match(failed[0].data, { jobId, status: 'failed', retries: 2, error: { code: 'UPSTREAM_ERROR' } });
  t.same(ended, [{ opco: OPCO, type: 'post-facture', status: 'failed' }]);

  await jobs.clock.advance(BACKOFF_MS[2]);
  await worker.handle(jobId, true);
  t.equal(posts(), 3, 'a failed job is never sent again');
});

t.test('an upstream 4xx fails the job at once, without a retry', async (t) => {
  for (const [status, code] of [
    [400, 'UPSTREAM_ERROR'],
    [404, 'NOT_FOUND'],
    [422, 'UPSTREAM_ERROR'],
  ] as const) {
    await t.test(`upstream ${status}`, async (t) => {
      const jobs = await startJobsKernel(t);
      jobs.upstream.script('POST /factures', { status, body: { errors: ['numero: déjà utilisé'] } });
      const jobId = await jobs.submit('postFacture', facture);
      const { worker } = jobs.worker();
      await worker.handle(jobId, false);
      const job = await jobOf(jobs, jobId);
      t.equal(job.status, 'failed');
      t.equal(job.retries, 0);
      t.match(job.steps[0], { status: 'failed', attempts: 1 });
      t.match(toResource(job).error, { code, upstream: { errors: ['numero: déjà utilisé'] } });
      t.equal(jobs.events.filter((e) => e.type === 'job.failed').length, 1);
      t.same(await jobs.depth(), { ready: 1, delayed: 0 }, 'no retry scheduled');
      await jobs.clock.advance(BACKOFF_MS[2]);
      await worker.handle(jobId, true);
      t.equal(jobs.upstream.callsTo('POST /factures').length, 1, 'one call only');
    });
  }
});

t.test('D18: a re-run after a failed document step skips the dossier step already completed', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /dossiers', ok({ numeroInterne: 'D-42' }));
  jobs.upstream.script('POST /documents', { status: 500, body: {} }, ok({ id: 'DOC' }));
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  const { worker } = jobs.worker();
  await worker.handle(jobId, false);
  t.equal((await jobOf(jobs, jobId)).status, 'processing');
  t.same(await stepsOf(jobs, jobId), [
    ['dossier', 'completed', 1],
    ['document:cerfa', 'failed', 1],
  ]);

  await jobs.clock.advance(BACKOFF_MS[0]);
  await worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, 1, 'the dossier is not posted twice');
  t.equal(jobs.upstream.callsTo('POST /documents').length, 2);
  t.same(await stepsOf(jobs, jobId), [
    ['dossier', 'completed', 1],
    ['document:cerfa', 'completed', 2],
  ]);
  t.equal(job.retries, 1);
  t.match(jobs.upstream.callsTo('POST /documents')[1].body, '"idObjet":"D-42"', 'the stored numeroInterne is reused');
});

t.test('D18: a dossier whose worker died mid-step is looked up by numeroExterne, not posted again', async (t) => {
  const jobs = await startJobsKernel(t);
  const leaseMs = jobs.config.leaseMs;
  jobs.upstream.script('GET /dossiers', ok({ numeroInterne: 'D-7', cerfa: {} }));
  const jobId = await jobs.submit('postDossier', { cerfa });
  // A worker took the job and died before recording anything: its call may have reached the upstream.
  const dead = new JobRecords(jobs.store, jobs.clock, 'dead-worker');
  t.ok(await dead.claim(jobId, leaseMs), 'claimed by the worker that dies');
  const { worker } = jobs.worker();
  await worker.handle(jobId, false);
  t.equal(jobs.upstream.calls.length, 0, 'never run by two workers at once: nothing sent while its lease is live');

  await jobs.clock.advance(leaseMs);
  await worker.handle(jobId, true);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, 0, 'the dossier the upstream has is not sent again');
  const lookups = jobs.upstream.callsTo('GET /dossiers');
  t.equal(lookups.length, 1);
  t.same(lookups[0].query, { numeroExterne: 'EXT-1', numeroDeca: 'DECA-1' });
  t.same(toResource(job).result, { status: 'success', numeroInterne: 'D-7', numeroExterne: 'EXT-1', recovered: true });
  t.equal(job.steps[0].attempts, 2, "the dead run's attempt is counted");
});

t.test('D18: a dossier the lookup does not find is posted, once', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('GET /dossiers', { status: 404, body: { message: 'Dossier inconnu' } });
  jobs.upstream.script('POST /dossiers', ok({ numeroInterne: 'D-8' }));
  const jobId = await jobs.submit('postDossier', { cerfa });
  await new JobRecords(jobs.store, jobs.clock, 'dead-worker').claim(jobId, jobs.config.leaseMs);
  await jobs.clock.advance(jobs.config.leaseMs);
  await jobs.worker().worker.handle(jobId, true);
  t.equal(jobs.upstream.callsTo('GET /dossiers').length, 1, 'looked up first');
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, 1);
  t.same(toResource(await jobOf(jobs, jobId)).result, { status: 'success', numeroInterne: 'D-8' });
});

t.test('a job whose sealed inputs are gone fails with INTERNAL_ERROR and calls nothing', async (t) => {
  const jobs = await startJobsKernel(t);
  const jobId = await jobs.submit('postFacture', facture);
  await jobs.store.collection('jobs').updateMany({ _id: jobId }, { $set: { inputs: null } });
  await jobs.worker().worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'failed');
  t.equal(toResource(job).error?.code, 'INTERNAL_ERROR');
  t.equal(jobs.upstream.calls.length, 0);
});

t.test('D17: a job pending past the 24 hours its files are kept fails, and is not sent without them', async (t) => {
  const jobs = await startJobsKernel(t);
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  await jobs.clock.advance(DAY_MS);
  t.equal(await jobs.secrets.sweepFiles(DAY_MS), 1, 'its file swept while the job waited');
  t.ok((await jobOf(jobs, jobId)).inputs, 'its key and body still there');
  await jobs.worker().worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'failed');
  t.match(toResource(job).error, { code: 'INTERNAL_ERROR', message: /files go 24 hours after their upload/ });
  t.equal(jobs.upstream.calls.length, 0, 'neither the dossier nor a document sent');
});
