// GET /{opcoId}/status verdicts (D13): healthy, degraded, unhealthy.
import t from 'tap';
import { startService } from '../src/index.js';

t.test('status verdicts follow the upstream and the 60-second window', async (t) => {
  const service = await startService({ config: { upstream: { timeoutMs: 400 } } });
  t.teardown(() => service.close());
  const { sandbox } = service;
  t.equal((await service.get('/sandbox/status')).body.status, 'healthy');

  sandbox.faults.add({ route: 'GET /v1/status', status: 503, times: 1 });
  t.equal((await service.get('/sandbox/status')).body.status, 'unhealthy', '5xx');
  sandbox.faults.add({ route: 'GET /v1/status', destroy: true, times: 1 });
  const unreachable = await service.get('/sandbox/status');
  t.equal(unreachable.status, 200);
  t.equal(unreachable.body.status, 'unhealthy', 'unreachable');
  t.same(unreachable.body.supportedVersions, service.kernel.opcos.get('sandbox').profile.versions, 'versions from the profile');

  // The two failures above are 2 errors in 3 calls of the window: degraded though the call succeeds.
  t.equal((await service.get('/sandbox/status')).body.status, 'degraded', 'errors >= 5% in the window');
});
