// D4: two api processes and two workers against one MongoDB and one RabbitMQ process every job
// exactly once.
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
  waitForJob,
  send,
  TEST_MASTER_KEY,
  KEY_A,
  KEY_B,
} from '../src/index.js';

const skip = realBackendsSkip();
t.test('2 api + 2 worker processes', { skip }, async (t) => {
  const sandbox = await startSandbox();
  const file = writeConfig({
    host: '127.0.0.1',
    port: 0,
    ...realBackends('multi'),
    jobs: { backoffMs: [100, 200, 400], prefetch: 2 },
    opcos: {
      sandbox: {
        adapter: 'sandbox',
        baseUrl: sandbox.url,
        tokenUrl: sandbox.tokenUrl,
        clientId: 'multi',
        clientSecretEnv: 'MULTI_SECRET',
      },
    },
  });
  const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, MULTI_SECRET: 's' };
  const processes = [
    runCli(['api', '--config', file], env),
    runCli(['api', '--config', file], env),
    runCli(['worker', '--config', file], env),
    runCli(['worker', '--config', file], env),
  ];
  t.teardown(async () => {
    for (const p of processes) await stopCli(p.child);
    await sandbox.close();
  });
  const urls = await Promise.all(processes.slice(0, 2).map((p) => p.url));
  await Promise.all(processes.slice(2).map((p) => p.printed(/worker started/)));
  sandbox.faults.add({ route: 'POST /v1/factures', latencyMs: 80 });

  const submitted = [];
  for (let i = 0; i < 16; i++) {
    const body = factureBody('DOS-2023-000001');
    body.numero = `MULTI-${i}`;
    const key = i % 2 ? KEY_A : KEY_B;
    const reply = await send(urls[i % 2], 'POST', '/sandbox/factures', {
      key,
      body,
      headers: { 'Idempotency-Key': `multi-${i}` },
    });
    t.equal(reply.status, 202, reply.text);
    submitted.push({ key, reply, url: urls[(i + 1) % 2] });
  }
  const dup = await send(urls[1], 'POST', '/sandbox/factures', {
    key: KEY_B,
    body: factureBody('x'),
    headers: { 'Idempotency-Key': 'multi-0' },
  });
  t.equal(dup.status, 200, 'a key seen by the other api process is a duplicate');
  t.equal(dup.body.jobId, submitted[0].reply.body.jobId);

  const race = await Promise.all(
    urls.flatMap((url) =>
      [0, 1, 2].map(() =>
        send(url, 'POST', '/sandbox/factures', {
          key: KEY_A,
          body: factureBody('DOS-RACE'),
          headers: { 'Idempotency-Key': 'race-two-apis' },
        }),
      ),
    ),
  );
  t.equal(
    race.filter((r) => r.status === 202).length,
    1,
    `one job for one key raced on two api processes (${race.map((r) => r.status).join(',')})`,
  );
  t.equal(new Set(race.map((r) => r.body.jobId)).size, 1);
  submitted.push({ key: KEY_A, reply: race.find((r) => r.status === 202)!, url: urls[0] });

  for (const { key, reply, url } of submitted) {
    const job = await waitForJob({ request: (m, p, o) => send(url, m, p, o) }, reply.body.statusUrl, {
      key,
      timeoutMs: 30_000,
    });
    t.equal(job.status, 'completed', `job read through the other api process: ${JSON.stringify(job.error)}`);
  }
  for (let i = 0; i < 16; i++) {
    const sent = sandbox.received.filter(
      (r) =>
        r.path === '/v1/factures' &&
        r.parts?.some((p) => p.name === 'facture' && JSON.parse(p.content.toString()).numero === `MULTI-${i}`),
    );
    t.equal(sent.length, 1, `MULTI-${i} sent exactly once`);
  }
  // A job reads as completed before its worker's "job ended" log line has crossed the pipe.
  const endedLines = () => processes.slice(2).map((p) => (p.output().match(/"msg":"job ended"/g) ?? []).length);
  const perWorker = await eventually(() => {
    const lines = endedLines();
    return lines[0] + lines[1] >= 17 && lines;
  }, '17 "job ended" lines').catch(() => endedLines());
  t.equal(perWorker[0] + perWorker[1], 17, `every job ended on a worker (${perWorker.join(' + ')})`);
  t.ok(
    perWorker.every((n) => n > 0),
    'both workers took jobs',
  );
});
