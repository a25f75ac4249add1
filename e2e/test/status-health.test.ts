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
  t.same(
    unreachable.body.supportedVersions,
    service.kernel.opcos.get('sandbox').profile.versions,
    'versions from the profile',
  );

  // The two failures above are 2 errors in 3 calls of the window: degraded though the call succeeds.
  t.equal((await service.get('/sandbox/status')).body.status, 'degraded', 'errors >= 5% in the window');
});

t.test(
  "answers about the client's input or key are the upstream working: they do not degrade the verdict (D13)",
  async (t) => {
    const service = await startService({ sandbox: { acceptedKeys: ['tenant-a-key-0001'] } });
    t.teardown(() => service.close());
    const { sandbox } = service;
    t.equal((await service.get('/sandbox/status')).body.status, 'healthy');
    // An unknown dossier (a mapped NOT_FOUND), an upstream 400 and 422 about the input, a key the upstream refuses.
    t.equal((await service.get('/sandbox/dossiers?numeroInterne=DOS-0000-999999')).status, 404);
    sandbox.faults.add({
      route: 'GET /v2/dossiers/etats',
      status: 400,
      times: 1,
      body: { message: 'paramètre invalide' },
    });
    t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=7')).status, 400);
    sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 422, times: 1, body: { message: 'date invalide' } });
    t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=8')).status, 422);
    t.equal((await service.get('/sandbox/dossiers/etats', { key: 'stranger-key-0001' })).status, 403);
    const window = service.kernel.window.snapshot('sandbox');
    t.equal(window.errors, 0, 'none of them counted as an error');
    t.equal((await service.get('/sandbox/status')).body.status, 'healthy');
    // The upstream's own failures still count.
    sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 500, times: 1 });
    t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=9')).status, 500);
    t.equal(service.kernel.window.snapshot('sandbox').errors, 1, 'a 5xx is an error');
    t.equal((await service.get('/sandbox/status')).body.status, 'degraded');
  },
);
