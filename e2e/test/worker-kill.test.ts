// D18: kill -9 of a worker mid-job loses nothing; the job resumes on another worker, and the
// dossier that may already have reached the upstream is looked up, not sent twice.
import t from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  runCli,
  stopCli,
  writeConfig,
  realBackends,
  realBackendsSkip,
  dossierBody,
  waitForJob,
  send,
  TEST_MASTER_KEY,
  KEY_A,
} from '../src/index.js';

const skip = realBackendsSkip();
t.test('a worker killed with SIGKILL in the middle of an upstream call', { skip }, async (t) => {
  const sandbox = await startSandbox();
  const file = writeConfig({
    host: '127.0.0.1',
    port: 0,
    ...realBackends('kill'),
    jobs: { leaseMs: 2500, backoffMs: [100, 200, 400] },
    opcos: {
      sandbox: {
        adapter: 'sandbox',
        baseUrl: sandbox.url,
        tokenUrl: sandbox.tokenUrl,
        clientId: 'kill',
        clientSecretEnv: 'KILL_SECRET',
      },
    },
  });
  const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, KILL_SECRET: 's' };
  const api = runCli(['api', '--config', file], env);
  const first = runCli(['worker', '--config', file], env);
  let second: ReturnType<typeof runCli> | undefined;
  t.teardown(async () => {
    await stopCli(api.child);
    await stopCli(first.child, 'SIGKILL');
    if (second) await stopCli(second.child);
    await sandbox.close();
  });
  const url = await api.url;
  await first.printed(/worker started/);

  // The upstream is slow: it creates the dossier 600 ms after the call arrives, after the worker died.
  sandbox.faults.add({ route: 'POST /v1/dossiers', latencyMs: 600, times: 1 });
  const body = dossierBody();
  const accepted = await send(url, 'POST', '/sandbox/dossiers', { body });
  t.equal(accepted.status, 202, accepted.text);
  const arrived = async () =>
    sandbox.received.some(
      (r) => r.method === 'POST' && (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    );
  for (let i = 0; i < 200 && !(await arrived()); i++) await new Promise((r) => setTimeout(r, 25));
  t.ok(await arrived(), 'the first worker sent the dossier');
  first.child.kill('SIGKILL');
  t.equal(await stopCli(first.child, 'SIGKILL'), null, 'killed');

  second = runCli(['worker', '--config', file], env);
  const service = { request: (method: string, path: string, o?: any) => send(url, method, path, o) };
  const job = await waitForJob(service, accepted.body.statusUrl, { key: KEY_A, timeoutMs: 30_000 });
  t.equal(job.status, 'completed', JSON.stringify(job));
  const created = sandbox.dataset.dossiers.filter((d: any) => d.numeroExterne === body.cerfa.numeroExterne);
  t.equal(created.length, 1, 'one dossier upstream, not two');
  t.equal(job.result.numeroInterne, created[0].numeroInterne, 'the job found the dossier the dead worker created');
  const posts = sandbox.received.filter(
    (r) => r.method === 'POST' && (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
  );
  t.equal(posts.length, 1, 'not re-sent');
  t.ok(
    sandbox.received.some(
      (r) => r.method === 'GET' && r.path === '/v2/dossiers' && r.query.numeroExterne === body.cerfa.numeroExterne,
    ),
    'looked up first',
  );
});
