// Async jobs end to end on the embedded store and queue.
import t from 'tap';
import { factureBody, jobsSuite, startService, waitForJob } from '../src/index.js';

jobsSuite(t, () => ({}));

// Regression: a retry message that arrives at once (no backoff) used to find the job still
// leased by the run that scheduled it, and the job stayed `processing` with no message left.
t.test('retries scheduled with no delay still run and end every job', async (t) => {
  const service = await startService({ config: { jobs: { backoffMs: [0, 0, 0] } as never } });
  t.teardown(() => service.close());
  const numero = service.sandbox.dataset.dossiers[0].numeroInterne;
  service.sandbox.faults.add({ route: 'POST /v1/factures', status: 500, times: 24 });
  const replies = await Promise.all(Array.from({ length: 12 }, () => service.request('POST', '/sandbox/factures', { body: factureBody(numero) })));
  const jobs = await Promise.all(replies.map((reply) => waitForJob(service, reply.body.statusUrl, { timeoutMs: 10_000 })));
  t.same(jobs.map((job) => job.status === 'completed' || job.status === 'failed'), jobs.map(() => true));
  const attempts = service.sandbox.received.filter((r) => r.method === 'POST' && r.path === '/v1/factures').length;
  t.equal(attempts, jobs.reduce((sum, job) => sum + job.retries + 1, 0), 'every attempt counted once in retries');
});
