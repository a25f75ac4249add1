// Issue 38: one tenant cannot take another's share of the store budget or of the job workers.
// The real service as a process, no hub, the embedded store (and, with MONGODB_URL and
// RABBITMQ_URL, two instances sharing MongoDB and RabbitMQ), the sandbox upstream.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  PDF,
  dossierBody,
  realBackends,
  realBackendsSkip,
  startClientScene,
  statusCounts,
  type ClientScene,
} from '../src/index.js';

t.setTimeout(240_000);

const BULK = 'cfa-bulk-tenant-key-01';
const READER = 'cfa-reader-tenant-key-01';
const FILES = Object.fromEntries(
  ['cerfa', 'facture', 'convention', 'certificat', 'document'].map((role) => [role, PDF.toString('base64')]),
);
const LIMIT = { limit: 20, windowMs: 10_000 };

/** A composite job of the bulk tenant: the dossier and its five files, six upstream calls. */
const composite = () => dossierBody({ _files: FILES });

/** A CFA's user reading a dossier a second: half the budget of a 20-per-10-s OPCO, its fair share beside the bulk tenant. */
async function readsOfAnotherTenant(scene: ClientScene, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const reply = await scene.send(
      'GET',
      `/sandbox/dossiers?numeroInterne=DOS-2019-${String(1 + i).padStart(6, '0')}`,
      READER,
    );
    statuses.push(reply.status);
    await sleep(Math.max(0, 1000 - (Date.now() - started)));
  }
  return statuses;
}

t.test(
  "no hub, 20 calls per 10 s: another tenant's reads are served while one tenant's long composite jobs run",
  async (t) => {
    const scene = await startClientScene({ acceptedKeys: [BULK, READER], opco: { rateLimit: LIMIT } });
    t.teardown(() => scene.close());
    // Both tenants have used the service: proven.
    t.equal((await scene.send('GET', '/sandbox/dossiers/etats', BULK)).status, 200);
    t.equal((await scene.send('GET', '/sandbox/dossiers/etats', READER)).status, 200);
    const jobs = await Promise.all(
      Array.from({ length: 10 }, () => scene.send('POST', '/sandbox/dossiers', BULK, { body: composite() })),
    );
    t.same(statusCounts(jobs), { 202: 10 }, 'ten composite jobs: 60 upstream calls, three windows of budget');
    await sleep(2000);
    const reads = await readsOfAnotherTenant(scene, 20);
    t.comment(`the other tenant's reads: ${JSON.stringify(statusCounts(reads.map((status) => ({ status }))))}`);
    t.ok(
      reads.filter((status) => status !== 429).length >= 18,
      'at least 90 % of its 20 reads answered by the upstream, not 429',
    );
  },
);

t.test("four long jobs of one tenant: another tenant's one-step job starts within 5 s", async (t) => {
  const scene = await startClientScene({ acceptedKeys: [BULK, READER] });
  t.teardown(() => scene.close());
  // Every file call takes 2 s: a composite job runs for over 10 s.
  scene.sandbox.faults.add({ route: 'POST /v1/documents', latencyMs: 2000 });
  scene.sandbox.faults.add({ route: 'POST /v1/factures', latencyMs: 2000 });
  scene.sandbox.faults.add({ route: 'POST /v1/conventions', latencyMs: 2000 });
  scene.sandbox.faults.add({ route: 'POST /v2/certificats', latencyMs: 2000 });
  const long = await Promise.all(
    Array.from({ length: 4 }, () => scene.send('POST', '/sandbox/dossiers', BULK, { body: composite() })),
  );
  t.same(statusCounts(long), { 202: 4 });
  await sleep(1500);
  const submitted = Date.now();
  const one = await scene.send('POST', '/sandbox/dossiers', READER, { body: dossierBody() });
  t.equal(one.status, 202);
  let job: any;
  for (let i = 0; i < 100; i++) {
    job = (await scene.send('GET', one.body.statusUrl, READER)).body;
    if (job.startedAt) break;
    await sleep(100);
  }
  const startedMs = new Date(job.startedAt).getTime() - submitted;
  t.comment(`the other tenant's job started ${startedMs} ms after its submission`);
  t.ok(job.startedAt && startedMs <= 5000, 'within 5 s');
});

const skip = realBackendsSkip();
t.test(
  "two instances on one shared store: another tenant's reads on one are served while the other runs one tenant's jobs",
  { skip },
  async (t) => {
    const backends = realBackends('fairness');
    const first = await startClientScene({
      acceptedKeys: [BULK, READER],
      opco: { rateLimit: LIMIT },
      config: backends,
    });
    t.teardown(() => first.close());
    const second = await startClientScene({
      acceptedKeys: [BULK, READER],
      opco: { rateLimit: LIMIT },
      config: backends,
      upstream: first.sandbox,
    });
    t.teardown(() => second.close());
    t.equal((await first.send('GET', '/sandbox/dossiers/etats', BULK)).status, 200);
    t.equal((await second.send('GET', '/sandbox/dossiers/etats', READER)).status, 200);
    const jobs = await Promise.all(
      Array.from({ length: 10 }, () => first.send('POST', '/sandbox/dossiers', BULK, { body: composite() })),
    );
    t.same(statusCounts(jobs), { 202: 10 });
    await sleep(2000);
    const reads = await readsOfAnotherTenant(second, 20);
    t.comment(
      `the other tenant's reads on the second instance: ${JSON.stringify(statusCounts(reads.map((status) => ({ status }))))}`,
    );
    t.ok(
      reads.filter((status) => status !== 429).length >= 18,
      'at least 90 % of its 20 reads answered by the upstream, not 429',
    );
  },
);
