// Issue "hardening" 6 (P3): SIGTERM stops accepting, lets requests in flight finish within the
// grace period, hands back unfinished jobs, and exits 0; a second signal stops at once; /ready
// says 503 while the process drains.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { TEST_MASTER_KEY, KEY_A, dossierBody, eventually, runCli, startService, stopCli, waitForJob, writeConfig } from '../src/index.js';

async function servingProcess(t: Test, latencyMs: number, extra: Record<string, unknown> = {}) {
  const sandbox = await startSandbox();
  t.teardown(() => sandbox.close());
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', latencyMs });
  const file = writeConfig({
    host: '127.0.0.1', port: 0, logLevel: 'warn', ...extra,
    opcos: { sandbox: { adapter: 'sandbox', baseUrl: sandbox.url, tokenUrl: sandbox.tokenUrl, clientId: 'c', clientSecretEnv: 'S' } },
  });
  const proc = runCli(['serve', '--config', file], { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, S: 'secret' });
  t.teardown(() => stopCli(proc.child, 'SIGKILL'));
  const url = await proc.url;
  const slowCalls = () => sandbox.received.filter((r) => r.path === '/v2/dossiers/etats').length;
  return { sandbox, proc, url, slowCalls };
}

t.test('SIGTERM: every request in flight is answered, then the process exits 0', async (t) => {
  const { proc, url, slowCalls } = await servingProcess(t, 1500);
  const inFlight = Array.from({ length: 6 }, (_, i) =>
    fetch(`${url}/sandbox/dossiers/etats?numeroPage=${i + 1}`, { headers: { 'x-api-key': KEY_A } }).then(async (r) => ({ status: r.status, body: await r.json() as any })),
  );
  await eventually(() => slowCalls() === 6, 'the six calls reached the upstream');
  proc.child.kill('SIGTERM');
  const answers = await Promise.all(inFlight);
  t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200], 'all six answered');
  t.ok(answers.every((a) => a.body.status === 'success'));
  const [code] = await once(proc.child, 'close');
  t.equal(code, 0, 'exit 0');
  await t.rejects(fetch(`${url}/health`), 'no new connection once stopped');
});

t.test('a second signal stops the process at once', async (t) => {
  const { proc, url, slowCalls } = await servingProcess(t, 20_000);
  const hanging = fetch(`${url}/sandbox/dossiers/etats?numeroPage=1`, { headers: { 'x-api-key': KEY_A } }).then((r) => r.status, () => 'cut');
  await eventually(() => slowCalls() === 1, 'the call reached the upstream');
  proc.child.kill('SIGTERM');
  await proc.printed(/shutting down gracefully/);
  proc.child.kill('SIGTERM');
  const [code] = await once(proc.child, 'close');
  t.equal(code, 143, 'stopped by the second signal, not after the 25 s grace');
  t.equal(await hanging, 'cut');
});

t.test('/ready answers 503 while the process drains', async (t) => {
  const service = await startService({ sandbox: {} });
  service.sandbox.faults.add({ route: 'GET /v2/dossiers/etats', latencyMs: 800 });
  // A second listener on the same app: the kernel's own stops accepting connections when it drains.
  const probe = createServer(service.kernel.app.callback()).listen(0, '127.0.0.1');
  await once(probe, 'listening');
  t.teardown(() => probe.close());
  const probeUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  t.equal((await fetch(`${probeUrl}/ready`)).status, 200, 'ready before');
  const slow = service.get('/sandbox/dossiers/etats?numeroPage=3');
  await eventually(() => service.sandbox.received.some((r) => r.path === '/v2/dossiers/etats'), 'the slow call is upstream');
  const closing = service.close();
  const draining = await fetch(`${probeUrl}/ready`);
  t.equal(draining.status, 503, 'not ready while draining');
  t.equal(((await draining.json()) as any).code, 'UNAVAILABLE');
  t.equal((await slow).status, 200, 'the request in flight still answered');
  await closing;
});

t.test('a job still running at the end of the grace period is handed back and resumed by the next worker, sent once', async (t) => {
  const upstream = await startSandbox();
  t.teardown(() => upstream.close());
  const path = mkdtempSync(join(tmpdir(), 'opco-grace-'));
  const config = { store: { type: 'embedded', path }, shutdownGraceMs: 300, jobs: { leaseMs: 120_000 } };
  const first = await startService({ upstream, config });
  upstream.faults.add({ route: 'POST /v1/dossiers', latencyMs: 1500, times: 1 });
  const body = dossierBody();
  const accepted = await first.request('POST', '/sandbox/dossiers', { body });
  await eventually(() => upstream.received.some((r) => r.method === 'POST' && r.path === '/v1/dossiers'), 'the dossier is on its way upstream');
  await first.close();
  // The upstream did create it (its answer only came too late): the next worker must find it, not send it again.
  await eventually(() => upstream.dataset.dossiers.some((d) => d.numeroExterne === body.cerfa.numeroExterne), 'created upstream');
  const second = await startService({ upstream, config });
  t.teardown(() => second.close());
  const job = await waitForJob(second, accepted.body.statusUrl, { timeoutMs: 15_000 });
  t.equal(job.status, 'completed', 'resumed at once: its lease was released, not left to lapse (120 s)');
  t.equal(job.result.recovered, true, 'found upstream by its numeroExterne (D18)');
  t.equal(upstream.received.filter((r) => r.method === 'POST' && r.path === '/v1/dossiers').length, 1, 'sent exactly once');
});

t.test('access lines, written in batches, come out within 250 ms and all of them by the exit', async (t) => {
  const { proc, url } = await servingProcess(t, 0, { logLevel: 'info' });
  const get = (id: string) => fetch(`${url}/health`, { headers: { 'x-request-id': id } }).then((r) => r.text());
  await get('batched-line-1');
  await proc.printed(/"requestId":"batched-line-1"/, 2000); // the periodic write, no 4 KiB batch needed
  for (let i = 0; i < 5; i++) await get(`held-until-exit-${i}`);
  proc.child.kill('SIGTERM');
  const [code] = await once(proc.child, 'close');
  t.equal(code, 0);
  const lines = proc.output().split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
  t.same(lines.map((l) => l.requestId).filter((id: string) => id.startsWith('held-until-exit-')), [0, 1, 2, 3, 4].map((i) => `held-until-exit-${i}`), 'every line, in order');
  t.match(lines.find((l) => l.requestId === 'batched-line-1'), { method: 'GET', route: '/health', status: 200 });
});
