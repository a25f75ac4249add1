// The jobs plugin's operator routes over real HTTP (P9, issue 42): a job opened without its body,
// key or result; a failed job retried for its tenant, with the operator's audit record (D32); a
// bulk retry writing one audit record per job; what is refused, in the spec's error shape.
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import type { AdminJob, AuditPage } from '@opco-proxy/schemas';
import jobsPlugin from '../src/index.js';
import { ADMIN_KEY, KEY, OPCO, factureBody, startJobsKernel, type JobsKernel } from './fixtures/jobs-kernel.js';

const facture = factureBody();

async function failedJobs(jobs: JobsKernel, count: number): Promise<string[]> {
  jobs.upstream.script('POST /factures', { status: 503, body: { message: 'maintenance' } });
  jobs.config.attempts = 1;
  const { worker } = jobs.worker();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const jobId = await jobs.submit('postFacture', facture);
    await worker.handle(jobId, false);
    ids.push(jobId);
  }
  return ids;
}

t.test('operator routes of jobs, over HTTP', async (t) => {
  const jobs = await startJobsKernel(t, { plugins: [jobsPlugin], role: 'api' });
  const url = await jobs.kernel.listen(0, '127.0.0.1');
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...init.headers },
    });
  const [first, second, third] = await failedJobs(jobs, 3);

  const opened = await admin(`/admin/jobs/${first}`);
  t.equal(opened.status, 200);
  const job = (await opened.json()) as AdminJob;
  t.equal(job.tenant, tenantHash(KEY), 'its tenant, by hash');
  t.match(job.job, { jobId: first, opcoId: OPCO, type: 'post-facture', status: 'failed' });
  t.same(job.job.error, {
    code: 'UPSTREAM_ERROR',
    message: 'upstream answered 503',
    upstream: { message: 'maintenance' },
  });
  t.same(job.steps, [{ step: 1, name: 'facture', status: 'failed', attempts: 1, uncertain: false }]);
  t.match(job.retry, { possible: true, reason: null });
  t.notMatch(JSON.stringify(job), new RegExp(`${facture.ibanEmetteur}|cfa-key`), 'never its body or key');

  t.equal((await fetch(`${url}/admin/jobs/${first}`)).status, 401, 'behind the operator key');
  const unknown = await admin('/admin/jobs/00000000-0000-4000-8000-000000000000');
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { status: 'error', code: 'NOT_FOUND' });

  jobs.upstream.script('POST /factures', { status: 200, body: { status: 'success', numeroInterne: 'F-1' } });
  const retried = await admin(`/admin/jobs/${first}/retry`, { method: 'POST' });
  t.equal(retried.status, 202);
  t.same(await retried.json(), { jobId: first, status: 'pending', statusUrl: `/${OPCO}/jobs/${first}` });
  await jobs.clock.advance(1); // the clock is frozen: records of one millisecond have no order
  const again = await admin(`/admin/jobs/${first}/retry`, { method: 'POST' });
  t.equal(again.status, 409, 'a job no longer failed is not retried');
  t.match(await again.json(), { code: 'CONFLICT', description: /pending/ });

  const audit = async (jobId: string) =>
    ((await (await admin(`/admin/audit?jobId=${jobId}`)).json()) as AuditPage).items.filter(
      (record) => record.actor === 'operator',
    );
  const records = await audit(first);
  t.same(
    records.map((record) => [record.action, record.outcome.status]),
    [
      ['retryAdminJob', 409],
      ['retryAdminJob', 202],
    ],
    'D32: each operator action on the job audited, newest first',
  );
  t.match(records[1], { tenant: tenantHash(KEY), opcoId: OPCO, targets: { jobId: first } }, 'for its tenant');

  const invalid = await admin('/admin/jobs/retry', { method: 'POST', body: JSON.stringify({ limit: 0, colour: 1 }) });
  t.equal(invalid.status, 400);
  t.match(await invalid.json(), { code: 'VALIDATION_ERROR' });

  const dry = await admin('/admin/jobs/retry', {
    method: 'POST',
    body: JSON.stringify({ opcoId: OPCO, dryRun: true }),
  });
  t.match(await dry.json(), { dryRun: true, matched: 2, retried: 2, jobIds: [second, third] });
  const bulk = await admin('/admin/jobs/retry', {
    method: 'POST',
    body: JSON.stringify({ opcoId: OPCO, code: 'UPSTREAM_ERROR' }),
  });
  t.equal(bulk.status, 200);
  t.match(await bulk.json(), { dryRun: false, retried: 2, jobIds: [second, third] });
  for (const jobId of [second, third]) {
    t.equal((await jobs.records.get(jobId))?.status, 'pending');
    const records = (await audit(jobId)).filter((record) => record.action === 'retryAdminJobs');
    t.equal(records.length, 1, 'one audit record per job retried');
    t.match(records[0], { tenant: tenantHash(KEY), opcoId: OPCO, targets: { jobId }, outcome: { status: 200 } });
  }
});
