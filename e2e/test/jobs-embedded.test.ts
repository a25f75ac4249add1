// Async jobs end to end on the embedded store and queue.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  factureBody,
  filesSuite,
  jobsSuite,
  signatureValid,
  startReceiver,
  startService,
  waitForJob,
} from '../src/index.js';

jobsSuite(t, () => ({}));
t.test('files', async (t) => filesSuite(t, () => ({})));

// Regression: a retry message that arrives at once (no backoff) used to find the job still
// leased by the run that scheduled it, and the job stayed `processing` with no message left.
t.test('retries scheduled with no delay still run and end every job', async (t) => {
  const service = await startService({ config: { jobs: { backoffMs: [0, 0, 0] } } });
  t.teardown(() => service.close());
  const numero = service.sandbox.dataset.dossiers[0].numeroInterne;
  // A CFA that used the service before: a key never answered but with 5xx stays unproven, and
  // its jobs would share the unproven slice of the budget (P13).
  t.equal((await service.get('/sandbox/dossiers/etats')).status, 200);
  service.sandbox.faults.add({ route: 'POST /v1/factures', status: 500, times: 24 });
  const replies = await Promise.all(
    Array.from({ length: 12 }, () => service.request('POST', '/sandbox/factures', { body: factureBody(numero) })),
  );
  const jobs = await Promise.all(
    replies.map((reply) => waitForJob(service, reply.body.statusUrl, { timeoutMs: 10_000 })),
  );
  t.same(
    jobs.map((job) => job.status === 'completed' || job.status === 'failed'),
    jobs.map(() => true),
  );
  const attempts = service.sandbox.received.filter((r) => r.method === 'POST' && r.path === '/v1/factures').length;
  t.equal(
    attempts,
    jobs.reduce((sum, job) => sum + job.retries + 1, 0),
    'every attempt counted once in retries',
  );
});

// SPEC 8's 3 attempts are the default of `jobs.attempts`; an operator's setting bounds them.
t.test('a job is tried as many times as jobs.attempts says, then fails', async (t) => {
  for (const attempts of [5, undefined]) {
    const service = await startService({ config: { jobs: { backoffMs: [0], ...(attempts && { attempts }) } } });
    t.teardown(() => service.close());
    const numero = service.sandbox.dataset.dossiers[0].numeroInterne;
    t.equal((await service.get('/sandbox/dossiers/etats')).status, 200);
    service.sandbox.faults.add({ route: 'POST /v1/factures', status: 503, times: 50 });
    const reply = await service.request('POST', '/sandbox/factures', { body: factureBody(numero) });
    const job = await waitForJob(service, reply.body.statusUrl, { timeoutMs: 10_000 });
    const calls = service.sandbox.received.filter((r) => r.method === 'POST' && r.path === '/v1/factures').length;
    t.equal(job.status, 'failed', `${attempts ?? 'default'} attempts: the job fails`);
    t.equal(calls, attempts ?? 3, `${attempts ?? 'default'} attempts: the upstream was called that many times`);
    t.equal(job.retries, (attempts ?? 3) - 1, 'retries count the attempts after the first');
  }
});

// D25, D22: a worker that stopped between recording a job's end and emitting its event owes
// that event; the next start emits it, and a webhook receives it.
t.test('a job.completed owed from before a restart is emitted and delivered after it', async (t) => {
  const path = mkdtempSync(join(tmpdir(), 'opco-owed-'));
  const receiver = await startReceiver();
  const upstream = await startSandbox();
  t.teardown(async () => {
    await receiver.close();
    await upstream.close();
  });
  const first = await startService({ upstream, config: { store: { type: 'embedded', path } } });
  const hook = (
    await first.request('POST', '/webhooks', {
      body: { callbackUrl: `${receiver.url}/owed`, events: ['job.completed'] },
    })
  ).body;
  const reply = await first.request('POST', '/sandbox/factures', {
    body: factureBody(upstream.dataset.dossiers[0].numeroInterne),
  });
  const job = await waitForJob(first, reply.body.statusUrl);
  await receiver.waitFor(1, 10_000);
  // As if the worker had died after the end was stored and before the event went out.
  await first.kernel.store.collection('jobs').updateMany({ _id: job.jobId }, { $set: { notified: false } });
  await first.kernel.store.collection('webhook_deliveries').deleteMany({});
  await first.close();

  const second = await startService({ upstream, config: { store: { type: 'embedded', path } } });
  t.teardown(() => second.close());
  const [, again] = await receiver.waitFor(2, 10_000);
  t.equal(again.body.event, 'job.completed');
  t.equal(again.body.data.jobId, job.jobId);
  t.ok(signatureValid(hook.secret, again));
  const record = await second.kernel.store.collection('jobs').findOne({ _id: job.jobId });
  t.equal(
    (record as { notified?: boolean } | null)?.notified,
    true,
    'recorded as told, so it is not emitted a third time',
  );
});
