// Issue 42: an upstream that answers 503 for two minutes, then recovers. The service (embedded
// store and queue, on a free port, over HTTP, against the sandbox upstream) runs on a TestClock
// whose minutes are moved rather than waited for; real time still flows underneath, so jobs' short
// backoffs and webhook deliveries happen as they would. The history shows the 5xx burst and the
// failed jobs in the minutes they happened; a bulk retry of the UPSTREAM_ERROR jobs failed in that
// window completes every one with exactly one more upstream submission each, tells each tenant's
// webhook the new end, and writes one audit record per job.
import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import type { AdminHistory } from '@opco-proxy/schemas';
import { dossierBody, eventually, startReceiver, startService, waitForJob, type Service } from '../src/index.js';

const MINUTE_MS = 60_000;
const ADMIN_KEY = 'operator-key-of-the-history-test-0001';

interface Submitted {
  jobId: string;
  statusUrl: string;
  numeroExterne: string;
}

async function submit(service: Service, count: number): Promise<Submitted[]> {
  const jobs: Submitted[] = [];
  for (let i = 0; i < count; i++) {
    const body = dossierBody();
    const reply = await service.request('POST', '/sandbox/dossiers', { body });
    if (reply.status !== 202) throw new Error(`submission answered ${reply.status}: ${reply.text}`);
    jobs.push({ ...(reply.body as { jobId: string; statusUrl: string }), numeroExterne: body.cerfa.numeroExterne });
  }
  return jobs;
}

const ended = (service: Service, jobs: Submitted[], status: string) =>
  Promise.all(jobs.map((job) => waitForJob(service, job.statusUrl, { until: (j) => j.status === status })));

t.test('a two-minute upstream outage in the history, then a bulk retry of its failed jobs', async (t) => {
  const clock = new TestClock();
  // Start 5 s into a minute, so each step below stays inside the minute it is meant for.
  await clock.advance(MINUTE_MS - (clock.now() % MINUTE_MS) + 5_000);
  const minute = (n: number) => new Date(Math.floor(clock.now() / MINUTE_MS) * MINUTE_MS + n * MINUTE_MS);
  const receiver = await startReceiver({ status: 200 }, clock);
  const service = await startService({
    clock,
    sandbox: { clock },
    env: { OPCO_PROXY_ADMIN_KEY: ADMIN_KEY },
    config: { jobs: { backoffMs: [20, 20] }, webhooks: { retryDelaysMs: [0] } },
  });
  t.teardown(async () => {
    await service.close();
    await receiver.close();
  });
  const admin = (method: string, path: string, body?: unknown) =>
    service.request(method, path, { key: null, headers: { authorization: `Bearer ${ADMIN_KEY}` }, body });
  const hook = await service.request('POST', '/webhooks', {
    body: { callbackUrl: `${receiver.url}/hook`, events: ['job.completed', 'job.failed'] },
  });
  t.equal(hook.status, 201);

  const m0 = minute(0);
  await ended(service, await submit(service, 2), 'completed');

  service.sandbox.faults.add({ status: 503, body: { message: 'maintenance' } });
  await clock.advance(MINUTE_MS);
  const failed = await submit(service, 3);
  await ended(service, failed, 'failed');
  t.equal((await service.get('/sandbox/dossiers/etats')).status >= 500, true, 'reads fail too');
  await clock.advance(MINUTE_MS);
  failed.push(...(await submit(service, 2)));
  await ended(service, failed, 'failed');
  service.sandbox.faults.clear();
  const recoveredAt = clock.now();

  await clock.advance(MINUTE_MS);
  const m3 = minute(0);
  await ended(service, await submit(service, 1), 'completed');
  await clock.advance(MINUTE_MS);

  const history = await eventually(async () => {
    const reply = await admin(
      'GET',
      `/admin/history?since=${m0.toISOString()}&until=${minute(0).toISOString()}&series=upstream,jobs,requests`,
    );
    const body = reply.body as AdminHistory;
    // The minute m3 is written at the boundary just crossed: wait for it.
    return reply.status === 200 && body.series.some((s) => s.values[3] !== null) ? body : undefined;
  }, 'the history holds the four minutes');
  t.same(
    history.times,
    [0, 1, 2, 3].map((n) => new Date(m0.getTime() + n * MINUTE_MS).toISOString()),
    'one point per minute',
  );
  const values = (name: string, labels: Record<string, string>) =>
    history.series
      .find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))
      ?.values.map((value) => value ?? 0) ?? [0, 0, 0, 0];
  const upstream5xx = values('upstream', { opcoId: 'sandbox', outcome: '5xx' });
  t.equal(upstream5xx[0], 0, 'no 5xx before the outage');
  t.ok(upstream5xx[1] >= 9 && upstream5xx[2] >= 6, `the 5xx burst in its two minutes: ${upstream5xx.join(', ')}`);
  t.equal(upstream5xx[3], 0, 'none after it');
  t.same(values('jobs', { opcoId: 'sandbox', outcome: 'failed' }), [0, 3, 2, 0], 'the failed jobs in their minutes');
  t.same(values('jobs', { opcoId: 'sandbox', outcome: 'submitted' }), [2, 3, 2, 1]);
  t.same(values('jobs', { opcoId: 'sandbox', outcome: 'completed' }), [2, 0, 0, 1]);
  t.ok(values('requests', { class: '5xx' })[1] >= 1, 'the failed read answered 5xx in its minute');

  const filter = {
    opcoId: 'sandbox',
    code: 'UPSTREAM_ERROR',
    failedSince: minute(-3).toISOString(),
    failedUntil: m3.toISOString(),
  };
  const dry = await admin('POST', '/admin/jobs/retry', { ...filter, dryRun: true });
  t.match(dry.body, { dryRun: true, matched: 5, retried: 5, notRetryable: 0, more: false });
  const retried = await admin('POST', '/admin/jobs/retry', filter);
  t.equal(retried.status, 200);
  t.same([...retried.body.jobIds].sort(), failed.map((job) => job.jobId).sort(), 'the outage jobs, and only those');
  await ended(service, failed, 'completed');

  for (const job of failed) {
    const posts = service.sandbox.received.filter(
      (request) =>
        request.method === 'POST' &&
        request.at >= recoveredAt &&
        JSON.stringify(request.json ?? null).includes(job.numeroExterne),
    );
    t.equal(posts.length, 1, `job ${job.jobId}: one upstream submission after the outage`);
  }
  await eventually(
    () =>
      failed.every((job) =>
        ['job.failed', 'job.completed'].every((type) =>
          receiver.received.some((hit) => hit.body?.event === type && hit.body?.data?.jobId === job.jobId),
        ),
      ),
    "each tenant's webhook told the failure, then the completion",
  );
  for (const job of failed) {
    const audit = await admin('GET', `/admin/audit?jobId=${job.jobId}&action=retryAdminJobs`);
    t.equal(audit.body.items.length, 1, `one audit record for ${job.jobId}`);
  }
});
