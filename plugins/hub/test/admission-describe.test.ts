// GET /admin/upstreams (P9): what an instance tells operators of its hub side, per opcoId.
import t from 'tap';
import { TestClock, createLogger } from '@opco-proxy/core';
import { configureHubAdmission } from '../src/client/hub-admission.js';

t.test('without its hub an instance says so: disconnected, local bucket of its share, calls counted', async (t) => {
  const clock = new TestClock();
  const admission = configureHubAdmission({
    hub: { url: 'ws://127.0.0.1:9', apiKeyEnv: 'HUB_KEY', expectedInstances: 3 },
    env: { HUB_KEY: 'instance-key-0001' }, clock, log: createLogger({ level: 'silent' }), instanceId: 'instance-a',
  });
  t.teardown(() => admission.close());
  const opco = { id: 'sandbox', rateLimit: { limit: 10, windowMs: 60_000 } };
  t.same(admission.describe(opco), {
    provider: 'hub', used: 0, waiting: 0,
    hub: { state: 'disconnected', instanceId: 'instance-a', mode: 'local', localShare: 3, localOpensAt: null },
  }, 'never connected: no gate');
  const lease = await admission.admit({ opcoId: 'sandbox', rateLimit: opco.rateLimit, route: 'GET /dossiers', method: 'GET', priority: 1, tenant: 't', synchronous: true, proven: true, unprovenLimit: 1 });
  t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
  t.equal(admission.describe(opco).used, 1, 'a call in flight is counted');
  await lease.release({ status: 200, latencyMs: 5 });
  t.equal(admission.describe(opco).used, 1, 'and still counted by the window after it ended');
  await clock.advance(60_000);
  t.equal(admission.describe(opco).used, 0, 'until the window has passed');
});
