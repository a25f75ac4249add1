// GET /admin/upstreams (P9): what an instance tells operators of its hub side, per opcoId.
import t from 'tap';
import { createLogger } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { configureHubAdmission } from '../src/client/hub-admission.js';

function disconnected(t: { teardown(fn: () => unknown): void }, clock: TestClock) {
  const admission = configureHubAdmission({
    hub: { url: 'ws://127.0.0.1:9', apiKeyEnv: 'HUB_KEY', expectedInstances: 3, maxWaitMs: 30_000 },
    env: { HUB_KEY: 'instance-key-0001' },
    clock,
    log: createLogger({ level: 'silent' }),
    instanceId: 'instance-a',
  });
  t.teardown(() => admission.close());
  return admission;
}

t.test('without its hub an instance says so: disconnected, local bucket of its share, calls counted', async (t) => {
  const clock = new TestClock();
  const admission = disconnected(t, clock);
  const opco = { id: 'sandbox', rateLimit: { limit: 10, windowMs: 60_000 }, unprovenLimit: 1 };
  t.same(
    admission.describe(opco),
    {
      provider: 'hub',
      used: 0,
      waiting: 0,
      unproven: { limit: 1, used: 0, waiting: 0 },
      hub: { state: 'disconnected', instanceId: 'instance-a', mode: 'local', localShare: 3, localOpensAt: null },
    },
    'never connected: no gate',
  );
  const lease = await admission.admit({
    opcoId: 'sandbox',
    rateLimit: opco.rateLimit,
    route: 'GET /dossiers',
    method: 'GET',
    priority: 1,
    tenant: 't',
    synchronous: true,
    proven: true,
    unprovenLimit: 1,
  });
  t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
  t.equal(admission.describe(opco).used, 1, 'a call in flight is counted');
  await lease.release({ status: 200, latencyMs: 5 });
  t.equal(admission.describe(opco).used, 1, 'and still counted by the window after it ended');
  await clock.advance(60_000);
  t.equal(admission.describe(opco).used, 0, 'until the window has passed');
});

t.test(
  'without its hub the local bucket keeps unproven calls to its part of the slice, and they hold no proven call back',
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const admission = disconnected(t, clock);
    // A slice of 6 of 60, three instances: each takes 2 of its local share of 20.
    const rateLimit = { limit: 60, windowMs: 60_000 };
    const opco = { id: 'sandbox', rateLimit, unprovenLimit: 6 };
    const request = (proven: boolean, tenant: string) => ({
      opcoId: 'sandbox',
      rateLimit,
      route: 'GET /dossiers' as const,
      method: 'GET' as const,
      priority: 1,
      tenant,
      synchronous: false,
      proven,
      unprovenLimit: 6,
    });
    const admitted: string[] = [];
    // Asks still waiting fail when the admission closes at the end of the test.
    const admit = (proven: boolean, tenant: string) =>
      void admission.admit(request(proven, tenant)).then(
        () => admitted.push(tenant),
        () => undefined,
      );
    for (const tenant of ['x1', 'x2', 'x3', 'x4']) admit(false, tenant);
    admit(true, 'cfa');
    await new Promise((resolve) => setImmediate(resolve));
    t.same(admitted, ['x1', 'x2', 'cfa'], 'two strangers, then the proven tenant at once, past the two waiting');
    t.match(admission.describe(opco), {
      used: 3,
      waiting: 2,
      unproven: { limit: 2, used: 2, waiting: 2 },
      hub: { mode: 'local', localShare: 20 },
    });
  },
);
