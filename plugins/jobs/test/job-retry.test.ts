// An operator's retry of failed jobs (issue 42, P23) on a real kernel, store and queue, against a
// node:http upstream: a failed job keeps its sealed inputs for jobs.retryWindowHours, goes back to
// pending under its own id, skips what the upstream already took (D18), tells its end again; a job
// whose inputs or files are gone stays failed; a bulk retry follows its filter.
import t from 'tap';
import type { JobRecord } from '../src/job-records.js';
import { purgePassedRetryInputs, retryability, retryJob, retryJobs, type RetryDeps } from '../src/job-retry.js';
import { OPCO, OTHER_OPCO, factureBody, startJobsKernel, type JobsKernel } from './fixtures/jobs-kernel.js';
import { kindOfOperation } from '../src/job-plan.js';
import { submitJob } from '../src/submission.js';

const HOUR_MS = 3600_000;
const cerfa = { numeroExterne: 'EXT-1', numeroDeca: 'DECA-1', apprenti: { nom: 'DUPONT', prenom: 'LEA' } };
const facture = factureBody();
const ok = (body: Record<string, unknown>) => ({ status: 200, body: { status: 'success', ...body } });
const refused = { status: 422, body: { message: 'numéro déjà utilisé' } };
const outage = { status: 503, body: { message: 'maintenance' } };

const jobOf = async (jobs: JobsKernel, jobId: string): Promise<JobRecord> => (await jobs.records.get(jobId))!;
const depsOf = (jobs: JobsKernel): RetryDeps => ({
  records: jobs.records,
  secrets: jobs.secrets,
  queue: jobs.queue,
  clock: jobs.clock,
  log: jobs.api.log,
});
const filesOf = (jobs: JobsKernel, jobId: string) => jobs.store.collection('job_files').count({ jobId });

t.test('P23: a failed job keeps its sealed inputs and files for jobs.retryWindowHours, then they go', async (t) => {
  const jobs = await startJobsKernel(t);
  t.equal(jobs.config.retryWindowHours, 24, 'a day by default');
  jobs.config.attempts = 1;
  jobs.upstream.script('POST /dossiers', outage);
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  await jobs.worker().worker.handle(jobId, false);
  let job = await jobOf(jobs, jobId);
  t.equal(job.status, 'failed');
  t.ok(job.inputs, 'its sealed key and body kept');
  t.equal(await filesOf(jobs, jobId), 1, 'its file kept');
  t.same(job.retryableUntil, new Date(jobs.clock.now() + 24 * HOUR_MS));
  t.match(await retryability(depsOf(jobs), job), { possible: true });

  await jobs.clock.advance(24 * HOUR_MS - 1);
  t.equal(await purgePassedRetryInputs(jobs), 0, 'nothing purged before the window ends');
  await jobs.clock.advance(1);
  t.equal(await purgePassedRetryInputs(jobs), 1);
  job = await jobOf(jobs, jobId);
  t.notOk(job.inputs, 'the inputs go when the window ends');
  t.equal(job.retryableUntil, undefined);
  t.equal(await filesOf(jobs, jobId), 0, 'and its file');
  t.equal(job.status, 'failed', 'the job itself is kept (D17)');
  t.match(await retryability(depsOf(jobs), job), { possible: false, reason: /purged/ });
  await t.rejects(retryJob(depsOf(jobs), job), { code: 'CONFLICT', status: 409, message: /purged/ });
});

t.test('jobs.retryWindowHours 0: the inputs are purged at failure, as SPEC 3.1 says', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.config.retryWindowHours = 0;
  jobs.config.attempts = 1;
  jobs.upstream.script('POST /dossiers', outage);
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  await jobs.worker().worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'failed');
  t.notOk(job.inputs);
  t.equal(await filesOf(jobs, jobId), 0);
  await t.rejects(retryJob(depsOf(jobs), job), { code: 'CONFLICT' });
});

t.test(
  'a job the upstream refused (400, 403, 404, 422) keeps nothing: the same body would be refused again',
  async (t) => {
    const jobs = await startJobsKernel(t);
    jobs.upstream.script('POST /dossiers', refused);
    const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
    await jobs.worker().worker.handle(jobId, false);
    const job = await jobOf(jobs, jobId);
    t.equal(job.status, 'failed');
    t.notOk(job.inputs, 'its inputs purged at failure, as SPEC 3.1 says');
    t.equal(await filesOf(jobs, jobId), 0, 'its file too');
    t.match(await retryability(depsOf(jobs), job), { possible: false, reason: /refused/ });
  },
);

t.test('a retried job keeps its id, skips its completed steps (D18) and tells its end again', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /dossiers', ok({ numeroInterne: 'D-42' }));
  jobs.upstream.script('POST /documents', outage, ok({ id: 'DOC' }));
  jobs.config.attempts = 1;
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  const { worker } = jobs.worker();
  await worker.handle(jobId, false);
  const failed = await jobOf(jobs, jobId);
  t.equal(failed.status, 'failed', 'a 503 on the document, its last attempt, fails the job');
  const ready = (await jobs.depth()).ready;

  await jobs.clock.advance(HOUR_MS);
  const pending = await retryJob(depsOf(jobs), failed);
  t.equal(pending._id, jobId, 'the same job');
  t.equal(pending.status, 'pending');
  t.equal(pending.operatorRetries, 1);
  t.equal(pending.completedAt, null);
  t.equal(pending.error, undefined);
  t.equal(pending.expiresAt, undefined, 'not expired while unfinished');
  t.same(
    pending.steps.map((step) => [step.name, step.status, step.attempts]),
    [
      ['dossier', 'completed', 1],
      ['document:cerfa', 'pending', 0],
    ],
    'the failed step starts over, the completed one is kept',
  );
  t.equal((await jobs.depth()).ready, ready + 1, 'queued again');
  await t.rejects(
    retryJob(depsOf(jobs), failed),
    { code: 'CONFLICT' },
    'a second retry of the same failure is refused',
  );

  await worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, 1, 'the dossier the upstream took is not sent again');
  t.equal(jobs.upstream.callsTo('POST /documents').length, 2, 'the failed document is sent again, once');
  t.same(job.createdAt, failed.createdAt, 'its history kept');
  t.notOk(job.inputs, 'its inputs go when it completes');
  t.equal(await filesOf(jobs, jobId), 0, 'its files too');
  const ends = jobs.events.filter((e) => e.data.jobId === jobId && e.type !== 'job.progress').map((e) => e.type);
  t.same(ends, ['job.failed', 'job.completed'], 'its tenant is told each end');
});

t.test('D18: a retried step whose answer may have been lost is looked up before it is sent again', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /dossiers', { status: 503, body: {} });
  jobs.upstream.script('GET /dossiers', ok({ numeroInterne: 'D-7', cerfa: {} }));
  const jobId = await jobs.submit('postDossier', { cerfa });
  const { worker } = jobs.worker();
  for (const wait of [0, 1000, 2000]) {
    await jobs.clock.advance(wait);
    await worker.handle(jobId, false);
  }
  t.equal((await jobOf(jobs, jobId)).status, 'failed');
  // As a timeout on the last attempt leaves it (step-failure.ts, mayHaveReachedUpstream).
  await jobs.store.collection('jobs').updateMany({ _id: jobId }, { $set: { 'steps.0.uncertain': true } });
  const posts = jobs.upstream.callsTo('POST /dossiers').length;

  await retryJob(depsOf(jobs), await jobOf(jobs, jobId));
  await worker.handle(jobId, false);
  const job = await jobOf(jobs, jobId);
  t.equal(job.status, 'completed');
  t.equal(jobs.upstream.callsTo('GET /dossiers').length, 1, 'looked up first');
  t.equal(jobs.upstream.callsTo('POST /dossiers').length, posts, 'not posted again');
});

t.test('a job whose files were swept (D17: 24 hours after upload) cannot be retried', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.config.retryWindowHours = 48;
  jobs.config.attempts = 1;
  jobs.upstream.script('POST /dossiers', outage);
  const jobId = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  await jobs.worker().worker.handle(jobId, false);
  await jobs.clock.advance(24 * HOUR_MS);
  await jobs.secrets.sweepFiles(24 * HOUR_MS);
  const job = await jobOf(jobs, jobId);
  t.ok(job.inputs, 'its key and body are still kept');
  t.match(await retryability(depsOf(jobs), job), { possible: false, reason: /files were deleted/ });
  await t.rejects(retryJob(depsOf(jobs), job), { code: 'CONFLICT' });
  t.equal((await jobOf(jobs, jobId)).status, 'failed', 'it stays failed');

  // In a bulk retry beside a job whose files are kept: the page's counts do not add up, each is looked at.
  const fresh = await jobs.submit('postDossier', { cerfa, _files: { cerfa: [Buffer.from('%PDF-cerfa')] } });
  await jobs.worker().worker.handle(fresh, false);
  const bulk = await retryJobs(depsOf(jobs), { opcoId: OPCO }, { dryRun: true, limit: 1000 });
  t.match(bulk.answer, { matched: 2, retried: 1, notRetryable: 1, jobIds: [fresh] });
});

t.test('only failed jobs are retried', async (t) => {
  const jobs = await startJobsKernel(t);
  const jobId = await jobs.submit('postFacture', facture);
  await t.rejects(retryJob(depsOf(jobs), await jobOf(jobs, jobId)), { code: 'CONFLICT', message: /pending/ });
  await jobs.worker().worker.handle(jobId, false);
  await t.rejects(retryJob(depsOf(jobs), await jobOf(jobs, jobId)), { code: 'CONFLICT', message: /completed/ });
});

t.test('a bulk retry follows its filter: opcoId, error code, failure time; a dry run changes nothing', async (t) => {
  const jobs = await startJobsKernel(t);
  jobs.upstream.script('POST /factures', outage);
  jobs.config.attempts = 1;
  const { worker } = jobs.worker();
  const failAt = async (opcoId: string): Promise<string> => {
    const accepted = await submitJob(jobs.submission, kindOfOperation('postFacture'), opcoId, jobs.tenant, facture);
    await worker.handle(accepted.body.jobId, false);
    return accepted.body.jobId;
  };
  const early = await failAt(OPCO);
  await jobs.clock.advance(10 * 60_000);
  const windowStart = jobs.clock.date();
  const inWindow = [await failAt(OPCO), await failAt(OPCO)];
  const elsewhere = await failAt(OTHER_OPCO);
  // A job whose inputs were lost fails INTERNAL_ERROR: another code.
  const lost = (await submitJob(jobs.submission, kindOfOperation('postFacture'), OPCO, jobs.tenant, facture)).body
    .jobId;
  await jobs.store.collection('jobs').updateMany({ _id: lost }, { $set: { inputs: null } });
  await worker.handle(lost, false);
  await jobs.clock.advance(10 * 60_000);
  const windowEnd = jobs.clock.date();
  const late = await failAt(OPCO);
  t.equal((await jobOf(jobs, lost)).error?.code, 'INTERNAL_ERROR');

  const filter = {
    opcoId: OPCO,
    code: 'UPSTREAM_ERROR',
    failedSince: windowStart.toISOString(),
    failedUntil: windowEnd.toISOString(),
  };
  const dry = await retryJobs(depsOf(jobs), filter, { dryRun: true, limit: 1000 });
  t.same(
    dry.answer,
    { dryRun: true, matched: 2, retried: 2, notRetryable: 0, jobIds: inWindow, more: false },
    'the two jobs of the window, oldest failure first',
  );
  for (const jobId of [early, ...inWindow, elsewhere, lost, late])
    t.equal((await jobOf(jobs, jobId)).status, 'failed', 'a dry run changes nothing');

  const limited = await retryJobs(depsOf(jobs), { opcoId: OPCO }, { dryRun: true, limit: 1 });
  t.match(limited.answer, { matched: 1, more: true }, 'limit and more');
  const every = await retryJobs(depsOf(jobs), { opcoId: OPCO }, { dryRun: true, limit: 1000 });
  t.match(every.answer, { matched: 5, retried: 4, notRetryable: 1 }, 'the job without inputs counted apart');

  jobs.upstream.script('POST /factures', ok({ numeroInterne: 'F-1' }));
  const posts = jobs.upstream.callsTo('POST /factures').length;
  const done = await retryJobs(depsOf(jobs), filter, { dryRun: false, limit: 1000 });
  t.same(done.answer.jobIds, inWindow);
  t.same(
    done.retried.map((job) => job.status),
    ['pending', 'pending'],
  );
  for (const jobId of inWindow) await worker.handle(jobId, false);
  for (const jobId of inWindow) t.equal((await jobOf(jobs, jobId)).status, 'completed');
  t.equal(jobs.upstream.callsTo('POST /factures').length, posts + 2, 'one upstream submission each');
  for (const jobId of [early, elsewhere, lost, late])
    t.equal((await jobOf(jobs, jobId)).status, 'failed', 'jobs outside the filter stay failed');
});
