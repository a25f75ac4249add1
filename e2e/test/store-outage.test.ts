// Issue "hardening" 4 (D5): while the store is unreachable, every store-backed route answers
// 503 UNAVAILABLE with Retry-After (never 500), /health still answers, and service resumes when
// the store is back. Played with the embedded store closed under a running service, and with
// FerretDB behind a TCP relay that refuses and cuts connections (there /metrics' backend gauge,
// the store-unreachable alert's signal, goes from 1 to 0 and back), and with FerretDB up but its
// PostgreSQL behind such a relay (issue 31: FerretDB's InternalError answers were 500s).
import t, { type Test } from 'tap';
import { startRelay } from '@opco-proxy/core/tcp-relay';
import {
  dossierBody,
  eventually,
  postgresAddress,
  privateFerretDbSkip,
  realBackendsSkip,
  startPrivateFerretDb,
  startService,
  type Service,
} from '../src/index.js';

const READS = (jobId: string, syncId: string, webhookId: string) => [
  `/sandbox/jobs/${jobId}`,
  `/sync/${syncId}`,
  '/webhooks',
  `/webhooks/${webhookId}/logs`,
  '/pollers',
];

async function seed(service: Service) {
  const job = await service.request('POST', '/sandbox/dossiers', { body: dossierBody() });
  const sync = await service.request('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  const webhook = await service.request('POST', '/webhooks', {
    body: { callbackUrl: 'http://127.0.0.1:9/hook', events: ['job.completed'] },
  });
  for (const reply of [job, sync, webhook]) if (reply.status >= 300) throw new Error(`seeding failed: ${reply.text}`);
  return { jobId: job.body.jobId as string, syncId: sync.body.syncId as string, webhookId: webhook.body.id as string };
}

/** opco_proxy_backend_up for the store, as /metrics shows it. */
async function storeUp(service: Service): Promise<number> {
  const text = (await service.get('/metrics')).text;
  const line = /^opco_proxy_backend_up\{backend="store",kind="mongodb"\} (\d+)$/m.exec(text);
  if (!line) throw new Error(`no store line of opco_proxy_backend_up in /metrics:\n${text.slice(0, 2000)}`);
  return Number(line[1]);
}

async function expectUnavailable(t: Test, service: Service, paths: string[]) {
  for (const path of paths) {
    const reply = await service.get(path);
    t.equal(reply.status, 503, `GET ${path}`);
    t.equal(reply.body.code, 'UNAVAILABLE');
    t.match(reply.headers.get('retry-after'), /^\d+$/);
  }
  const write = await service.request('POST', '/sandbox/dossiers', { body: dossierBody() });
  t.equal(write.status, 503, 'a write is refused too, nothing accepted');
  t.equal((await service.get('/ready', { key: null })).status, 503, '/ready says so');
  t.equal((await service.get('/health', { key: null })).status, 200, '/health still answers');
}

t.test('embedded store closed under a running service', async (t) => {
  const logs: string[] = [];
  const service = await startService({ logs });
  t.teardown(() => service.close());
  // The job's call is answered a second after it arrives: the store is closed meanwhile.
  service.sandbox.faults.add({ route: 'POST ', latencyMs: 1000 });
  const ids = await seed(service);
  // The job's call has reached the upstream: its answer, a second later, cannot be recorded with
  // the store gone, and the worker retries the write. At shutdown that retry must end (the lease lapses):
  // a worker retrying for ever would keep this test's process alive, and tap fails it on timeout.
  const calls = () =>
    Object.entries(service.sandbox.stats.calls)
      .filter(([route]) => route.startsWith('POST '))
      .reduce((sum, [, n]) => sum + n, 0);
  for (let i = 0; i < 200 && calls() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.ok(calls() > 0, 'the job called the upstream');
  await service.kernel.store.close();
  await expectUnavailable(t, service, READS(ids.jobId, ids.syncId, ids.webhookId));
  for (let i = 0; i < 200 && !logs.some((line) => line.includes('could not be recorded yet')); i++)
    await new Promise((resolve) => setTimeout(resolve, 25));
  t.ok(
    logs.some((line) => line.includes('could not be recorded yet')),
    'the worker retries recording the accepted step',
  );
});

t.test('FerretDB unreachable, then back', { skip: realBackendsSkip() }, async (t) => {
  const relay = await startRelay(process.env.MONGODB_URL!, 27017);
  t.teardown(() => relay.close());
  const url = new URL(relay.url);
  url.searchParams.set('directConnection', 'true');
  url.searchParams.set('serverSelectionTimeoutMS', '1500');
  const database = `outage_${Date.now()}`;
  const logs: string[] = [];
  const service = await startService({ logs, config: { store: { type: 'mongodb', url: url.href, database } } });
  t.teardown(() => {
    if (t.passing()) return;
    for (const line of logs.filter((l) => /unexpected error|backend unavailable/.test(l)).slice(-3))
      t.comment(line.slice(0, 3000));
  });
  t.teardown(() => service.close());
  const ids = await seed(service);
  t.equal(await storeUp(service), 1, '/metrics: the store is up');
  relay.refuse(true);
  relay.cut();
  await expectUnavailable(t, service, READS(ids.jobId, ids.syncId, ids.webhookId));
  t.equal(await storeUp(service), 0, '/metrics: the store is down');
  relay.refuse(false);
  await expectBack(t, service, ids.jobId);
});

/** Served again once the store is back, without a restart; /metrics' gauge back to 1. */
async function expectBack(t: Test, service: Service, jobId: string) {
  const backAt = Date.now();
  let back = await service.get(`/sandbox/jobs/${jobId}`);
  await eventually(
    async () => (back = await service.get(`/sandbox/jobs/${jobId}`)).status === 200,
    'the job to be served again',
    60_000,
  ).catch(() => undefined);
  const up = await eventually(
    async () => (await storeUp(service)) === 1,
    '/metrics to show the store up',
    30_000,
  ).catch(() => false);
  t.ok(up, '/metrics: the store is up again');
  t.equal(
    back.status,
    200,
    `served again once the store is back, without a restart (after ${Date.now() - backAt} ms)${back.status === 200 ? '' : `: ${back.text.slice(0, 300)}`}`,
  );
}

// FerretDB itself answers, but its PostgreSQL is gone (down, or out of connection slots): every
// command fails with FerretDB's generic InternalError, which must still be 503, never 500.
const postgresSkip =
  realBackendsSkip() ||
  privateFerretDbSkip() ||
  (postgresAddress().startsWith('/') ? 'PostgreSQL on a socket: no relay' : false);
t.test("FerretDB's PostgreSQL unreachable, then back", { skip: postgresSkip }, async (t) => {
  const relay = await startRelay(`postgres://${postgresAddress()}`, 5432);
  t.teardown(() => relay.close());
  const ferretdb = await startPrivateFerretDb('pg_outage', { poolMaxConns: 20, postgresVia: new URL(relay.url).host });
  t.teardown(() => ferretdb.close());
  const logs: string[] = [];
  const service = await startService({
    logs,
    config: { store: { type: 'mongodb', url: ferretdb.url, database: 'outage' } },
  });
  t.teardown(() => service.close());
  const ids = await seed(service);
  relay.refuse(true);
  relay.cut();
  await expectUnavailable(t, service, READS(ids.jobId, ids.syncId, ids.webhookId));
  t.notOk(
    logs.some((line) => /unexpected error/.test(line)),
    'nothing logged as an unexpected error (a 500)',
  );
  relay.refuse(false);
  await expectBack(t, service, ids.jobId);
});
