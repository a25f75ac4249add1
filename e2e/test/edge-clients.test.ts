// Issue 37: legitimate CFAs are never locked out by the edge. The real service as a process, the
// production edge defaults and the sandbox profile's 60 calls a minute; each scene its own process.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  dossierBody,
  eventually,
  startClientScene,
  startService,
  statusCounts,
  waitForJob,
  type ClientScene,
} from '../src/index.js';

// A new key's 100 jobs take over a minute of the profile's budget: the file's own timeout.
t.setTimeout(300_000);

const HOOK = { callbackUrl: 'http://127.0.0.1:9/hooks', events: ['job.completed', 'job.failed'] };

async function waitForJobs(
  scene: ClientScene,
  key: string,
  statusUrls: string[],
  timeoutMs: number,
): Promise<{ statuses: Record<string, number>; ms: number }> {
  const started = Date.now();
  let statuses: Record<string, number> = {};
  // A client polling each of its jobs every 5 s: 20 polls a second, within D6's 50.
  while (Date.now() - started < timeoutMs) {
    const jobs = await Promise.all(statusUrls.map((url) => scene.send('GET', url, key)));
    statuses = statusCounts(jobs.map((reply) => ({ status: reply.status === 200 ? reply.body.status : reply.status })));
    if ((statuses.completed ?? 0) + (statuses.failed ?? 0) === statusUrls.length) break;
    await sleep(5000);
  }
  return { statuses, ms: Date.now() - started };
}

t.test('a proven CFA refused about one dossier and one job is refused that request only, not locked out', async (t) => {
  const cfa = 'cfa-proven-key-0001';
  const scene = await startClientScene({ acceptedKeys: [cfa] });
  t.teardown(() => scene.close());
  t.equal(
    (await scene.send('GET', '/sandbox/dossiers/etats', cfa)).status,
    200,
    'the CFA has used the service: proven',
  );

  // The upstream refuses one job about a dossier that is not the CFA's, with a 403 that does not say the key is unknown.
  scene.sandbox.faults.add({
    route: 'POST /v1/dossiers',
    times: 1,
    status: 403,
    body: { status: 'error', message: "ce dossier n'est pas rattaché à ce CFA" },
  });
  const refusedJob = await scene.send('POST', '/sandbox/dossiers', cfa, { body: dossierBody() });
  t.equal(refusedJob.status, 202);
  const [ended] = await waitFor(scene, cfa, refusedJob.body.statusUrl);
  t.match(ended, { status: 'failed', error: { code: 'HTTP_ERROR' } }, "that job fails with the upstream's 403");

  // And one read about another dossier that is not the CFA's.
  scene.sandbox.faults.add({
    route: 'GET /v2/dossiers',
    times: 1,
    status: 403,
    body: { status: 'error', message: 'accès refusé à ce dossier' },
  });
  const refusedRead = await scene.send('GET', '/sandbox/dossiers?numeroInterne=DOS-2019-000001', cfa);
  t.equal(refusedRead.status, 403);
  t.match(
    refusedRead.body,
    { code: 'HTTP_ERROR', upstream: { message: 'accès refusé à ce dossier' } },
    "the client gets the upstream's answer, as before",
  );

  const before = scene.upstreamCalls(cfa);
  const read = await scene.send('GET', '/sandbox/dossiers?numeroInterne=DOS-2019-000002', cfa);
  t.equal(read.status, 200, 'a read of another dossier right after is answered');
  t.equal(scene.upstreamCalls(cfa), before + 1, 'and reached the upstream (not a local 403)');
  const job = await scene.send('POST', '/sandbox/dossiers', cfa, { body: dossierBody() });
  t.equal(job.status, 202, 'a new submission is accepted');
  t.match((await waitFor(scene, cfa, job.body.statusUrl))[0], { status: 'completed' }, 'and completes');
  for (const numero of ['DOS-2019-000003', 'DOS-2019-000004', 'DOS-2019-000005']) {
    t.equal(
      (await scene.send('GET', `/sandbox/dossiers?numeroInterne=${numero}`, cfa)).status,
      200,
      `reads keep answering (${numero})`,
    );
  }

  // What the profile declares as "unknown key" (keyRefusal) is a key refusal at once.
  scene.sandbox.faults.add({
    route: 'GET /v2/dossiers',
    times: 1,
    status: 403,
    body: { status: 'error', message: 'clé API refusée' },
  });
  t.equal((await scene.send('GET', '/sandbox/dossiers?numeroInterne=DOS-2019-000006', cfa)).status, 403);
  const calls = scene.upstreamCalls(cfa);
  const local = await scene.send('GET', '/sandbox/dossiers?numeroInterne=DOS-2019-000007', cfa);
  t.equal(local.status, 403);
  t.match(local.body.description, /refused this X-API-KEY lately/, 'then answered locally');
  t.equal(scene.upstreamCalls(cfa), calls, 'without asking the upstream');
  t.equal((await scene.send('GET', job.body.statusUrl, cfa)).status, 200, 'its job status polls are still answered');
});

t.test('new CFAs: bursts accepted, polls free, webhooks registered, strangers bounded by what they hold', async (t) => {
  // The three scenes run side by side, each with its own process and budget.
  const burstKey = 'cfa-new-burst-key-0001';
  const hooksKey = 'cfa-new-hooks-key-0001';
  const publisherKeys = Array.from({ length: 20 }, (_, i) => `cfa-onboarding-${String(i).padStart(2, '0')}-key`);
  const newcomer = 'cfa-newcomer-key-0001';
  const [burst, onboarding, strangers] = await Promise.all([
    startClientScene({ acceptedKeys: [burstKey, hooksKey] }),
    startClientScene({ acceptedKeys: publisherKeys }),
    startClientScene({ acceptedKeys: [newcomer] }),
  ]);
  t.teardown(() => Promise.all([burst.close(), onboarding.close(), strangers.close()]));

  await Promise.all([
    (async () => {
      // A new key, one address: 100 submissions in a burst, every poll answered, all completed.
      const submitted = await Promise.all(
        Array.from({ length: 100 }, () => burst.send('POST', '/sandbox/dossiers', burstKey, { body: dossierBody() })),
      );
      t.same(statusCounts(submitted), { 202: 100 }, '100 × 202');
      const polls = await Promise.all(submitted.map((reply) => burst.send('GET', reply.body.statusUrl, burstKey)));
      t.same(statusCounts(polls), { 200: 100 }, 'every status poll right after: 200');
      const { statuses, ms } = await waitForJobs(
        burst,
        burstKey,
        submitted.map((reply) => reply.body.statusUrl),
        150_000,
      );
      t.comment(`100 jobs of a new key ended in ${ms} ms: ${JSON.stringify(statuses)}`);
      t.same(statuses, { completed: 100 }, 'all completed within 150 s');

      const hooks = await Promise.all(
        Array.from({ length: 20 }, () => burst.send('POST', '/webhooks', hooksKey, { body: HOOK })),
      );
      t.same(statusCounts(hooks), { 201: 20 }, 'a new key registers 20 webhooks at once');
      const extra = await burst.send('POST', '/webhooks', hooksKey, { body: HOOK });
      t.equal(extra.status, 400, "the 21st is D9's 400");
    })(),

    (async () => {
      // A publisher onboarding 20 new keys at once from one address.
      const replies = (
        await Promise.all(
          publisherKeys.map(async (key) => {
            const read = await onboarding.send('GET', '/sandbox/dossiers/etats', key);
            const rest = await Promise.all([
              ...Array.from({ length: 5 }, () =>
                onboarding.send('POST', '/sandbox/dossiers', key, { body: dossierBody() }),
              ),
              onboarding.send('POST', '/webhooks', key, { body: HOOK }),
              onboarding.send('POST', '/webhooks', key, { body: HOOK }),
              onboarding.send('GET', '/webhooks', key),
            ]);
            return [read, ...rest];
          }),
        )
      ).flat();
      const counts = statusCounts(replies);
      t.comment(`answers: ${JSON.stringify(counts)}`);
      t.same(counts, { 200: 40, 201: 40, 202: 100 }, 'a publisher onboarding 20 new keys: no 429, no 5xx');
    })(),

    (async () => {
      // Strangers inventing a key per submission, 20 a second for 30 s, from another address.
      const sent: Array<Promise<{ status: number; headers: Record<string, unknown> }>> = [];
      let newcomerReply: Promise<{ status: number }> | undefined;
      const started = Date.now();
      for (let tick = 0; Date.now() - started < 30_000; tick++) {
        sent.push(
          strangers.send('POST', '/sandbox/dossiers', `stranger-${tick}-${Math.random().toString(36).slice(2)}`, {
            body: dossierBody(),
            from: 'stranger',
          }),
        );
        if (tick === 300)
          newcomerReply = strangers.send('POST', '/sandbox/dossiers', newcomer, { body: dossierBody() });
        await sleep(Math.max(0, started + (tick + 1) * 50 - Date.now()));
      }
      const replies = await Promise.all(sent);
      const counts = statusCounts(replies);
      // Each stranger key that reached the upstream was refused there, and its one job ended failed.
      const refusedUpstream = new Set(
        strangers.sandbox.received
          .map((call) => String(call.headers['x-api-key']))
          .filter((key) => key.startsWith('stranger-')),
      ).size;
      const kept = (counts[202] ?? 0) - refusedUpstream;
      t.comment(
        `stranger submissions: ${JSON.stringify(counts)}; ${refusedUpstream} reached the upstream and failed; ${kept} jobs kept`,
      );
      t.ok(kept <= 300, `at most 300 of their jobs kept (tenantKeys.unprovenHoldings.jobs): ${kept}`);
      t.ok(
        (counts[429] ?? 0) > 0 && replies.filter((r) => r.status === 429).every((r) => r.headers['retry-after']),
        'past it, 429 with Retry-After',
      );
      t.equal(Object.keys(counts).filter((s) => s !== '202' && s !== '429').length, 0, 'nothing else');
      t.equal((await newcomerReply!).status, 202, "a new CFA from the publisher's address is accepted meanwhile");
    })(),
  ]);
});

async function waitFor(scene: ClientScene, key: string, statusUrl: string): Promise<[any]> {
  for (let i = 0; i < 300; i++) {
    const reply = await scene.send('GET', statusUrl, key);
    if (reply.body.status === 'completed' || reply.body.status === 'failed') return [reply.body];
    await sleep(100);
  }
  throw new Error(`${statusUrl} did not end`);
}

t.test(
  'a key the upstream refuses before ever accepting it: its other pending jobs fail without reaching it, its webhooks are deleted',
  async (t) => {
    const service = await startService({
      sandbox: { acceptedKeys: ['cfa-known-key-0001'] },
      config: { jobs: { tenantShare: 1, prefetch: 1 } },
    });
    t.teardown(() => service.close());
    const stranger = 'stranger-refused-key-01';
    const hook = await service.request('POST', '/webhooks', { key: stranger, body: HOOK });
    t.equal(hook.status, 201, 'registered while unproven');
    const jobs = await Promise.all(
      Array.from({ length: 3 }, () =>
        service.request('POST', '/sandbox/dossiers', { key: stranger, body: dossierBody() }),
      ),
    );
    t.same(statusCounts(jobs), { 202: 3 });
    const ended = await Promise.all(jobs.map((job) => waitForJob(service, job.body.statusUrl, { key: stranger })));
    t.same(
      ended.map((job) => [job.status, job.error.code]),
      Array(3).fill(['failed', 'HTTP_ERROR']),
      'all three fail with HTTP_ERROR',
    );
    t.equal(
      service.sandbox.received.filter((call) => call.headers['x-api-key'] === stranger).length,
      1,
      'only the first reached the upstream',
    );
    await eventually(
      async () => (await service.request('GET', '/webhooks', { key: stranger })).body.length === 0,
      'its webhooks deleted',
    );
  },
);
