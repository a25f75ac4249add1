// Observability of the backlog: with an api process and no worker, a submitted job and a test
// delivery wait, and /metrics shows how long (the age of the oldest pending job, the delivery
// lag, the jobs queue's depth); once a worker runs, they come back to 0.
import t from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  eventually,
  runCli,
  stopCli,
  writeConfig,
  realBackends,
  realBackendsSkip,
  factureBody,
  startReceiver,
  send,
  TEST_MASTER_KEY,
  KEY_A,
} from '../src/index.js';

const skip = realBackendsSkip();

function gauge(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} is not in /metrics`);
  return Number(line.split(' ')[1]);
}

t.test(
  'oldest pending job age and delivery lag grow while no worker runs, and fall to 0 after',
  { skip },
  async (t) => {
    const sandbox = await startSandbox();
    const receiver = await startReceiver({ status: 200 });
    const file = writeConfig({
      host: '127.0.0.1',
      port: 0,
      mode: 'development',
      ...realBackends('backlog'),
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'backlog',
          clientSecretEnv: 'BACKLOG_SECRET',
        },
      },
    });
    const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, BACKLOG_SECRET: 's' };
    const api = runCli(['api', '--config', file], env);
    let worker: ReturnType<typeof runCli> | undefined;
    t.teardown(async () => {
      await stopCli(api.child);
      if (worker) await stopCli(worker.child);
      await sandbox.close();
      await receiver.close();
    });
    const url = await api.url;
    const metrics = async () => (await send(url, 'GET', '/metrics', { key: null })).text;
    t.equal(gauge(await metrics(), 'opco_proxy_oldest_pending_job_age_seconds'), 0, 'no job waits at first');
    t.equal(gauge(await metrics(), 'opco_proxy_delivery_lag_seconds'), 0, 'no delivery waits at first');

    const job = await send(url, 'POST', '/sandbox/factures', { key: KEY_A, body: factureBody('DOS-2023-000001') });
    t.equal(job.status, 202, job.text);
    const hook = await send(url, 'POST', '/webhooks', {
      key: KEY_A,
      body: { callbackUrl: `${receiver.url}/backlog`, events: ['job.completed'] },
    });
    t.equal(hook.status, 201, hook.text);
    const test = await send(url, 'POST', `/webhooks/${hook.body.id}/test`, { key: KEY_A });
    t.equal(test.status, 202, test.text);

    const waiting = await eventually(async () => {
      const text = await metrics();
      const age = gauge(text, 'opco_proxy_oldest_pending_job_age_seconds');
      const lag = gauge(text, 'opco_proxy_delivery_lag_seconds');
      return age > 0.2 && lag > 0.2 && { age, lag };
    }, 'a job and a delivery seen waiting');
    t.ok(waiting.age > 0.2, `the pending job is ${waiting.age} s old`);
    t.ok(waiting.lag > 0.2, `the test delivery is ${waiting.lag} s late`);
    t.equal(
      gauge(await metrics(), 'opco_proxy_queue_depth{queue="jobs",state="ready"}'),
      1,
      'the job message waits in the jobs queue',
    );

    worker = runCli(['worker', '--config', file], env);
    await worker.printed(/worker started/);
    await eventually(
      async () => {
        const text = await metrics();
        return (
          gauge(text, 'opco_proxy_oldest_pending_job_age_seconds') === 0 &&
          gauge(text, 'opco_proxy_delivery_lag_seconds') === 0 &&
          gauge(text, 'opco_proxy_queue_depth{queue="jobs",state="ready"}') === 0
        );
      },
      'the backlog drained',
      30_000,
    );
    t.ok(
      receiver.received.some((r) => r.path === '/backlog'),
      'the test event reached the receiver',
    );
    const done = await send(url, 'GET', job.body.statusUrl, { key: KEY_A });
    t.equal(done.body.status, 'completed');
  },
);
