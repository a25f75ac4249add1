// Pipeline steps 3 and 10: hit, miss, per-tenant separation, query sensitivity and expiry.
import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { startService, KEY_A, KEY_B } from '../src/index.js';

// A frozen clock: entries live exactly their lifetime, however slow the machine.
const clock = new TestClock({ frozen: true });
const service = await startService({ clock, opco: { cacheTtlS: { 'GET /dossiers/etats': 60 } } });
t.teardown(() => service.close());
const { sandbox } = service;
const etatsCalls = () => sandbox.received.filter((r) => r.path === '/v2/dossiers/etats').length;

t.test('a second identical GET is a hit with no upstream call', async (t) => {
  sandbox.resetStats();
  const first = await service.get(
    '/sandbox/dossiers/liste?numerosInternes=' + sandbox.dataset.dossiers[0].numeroInterne,
  );
  t.equal(first.status, 200, first.text);
  t.equal(first.headers.get('x-cache'), 'MISS');
  const second = await service.get(
    '/sandbox/dossiers/liste?numerosInternes=' + sandbox.dataset.dossiers[0].numeroInterne,
  );
  t.equal(second.headers.get('x-cache'), 'HIT');
  t.same(second.body, first.body, 'same answer');
  t.equal(sandbox.received.length, 1, 'upstream called once');
});

t.test('a different query is a different entry', async (t) => {
  sandbox.resetStats();
  await service.get('/sandbox/dossiers/etats?numeroPage=1');
  const other = await service.get('/sandbox/dossiers/etats?numeroPage=2');
  t.equal(other.headers.get('x-cache'), 'MISS');
  const reordered = await service.get('/sandbox/dossiers/etats?anneeDossier=2022&numeroPage=1');
  const sameParamsOtherOrder = await service.get('/sandbox/dossiers/etats?numeroPage=1&anneeDossier=2022');
  t.equal(reordered.headers.get('x-cache'), 'MISS');
  t.equal(sameParamsOtherOrder.headers.get('x-cache'), 'HIT', 'parameter order does not matter');
  t.equal(etatsCalls(), 3);
});

t.test('tenants never share entries', async (t) => {
  sandbox.resetStats();
  const numero = sandbox.dataset.dossiers[1].numeroInterne;
  const a = await service.get(`/sandbox/dossiers?numeroInterne=${numero}`, { key: KEY_A });
  const b = await service.get(`/sandbox/dossiers?numeroInterne=${numero}`, { key: KEY_B });
  t.equal(a.headers.get('x-cache'), 'MISS');
  t.equal(b.headers.get('x-cache'), 'MISS', 'tenant B does not read tenant A entry');
  t.equal(sandbox.received.length, 2);
  t.equal(sandbox.received[1].headers['x-api-key'], KEY_B, 'B reached the upstream with its own key');
  const again = await service.get(`/sandbox/dossiers?numeroInterne=${numero}`, { key: KEY_B });
  t.equal(again.headers.get('x-cache'), 'HIT');
});

t.test('an entry expires after its lifetime, in memory and in the store', async (t) => {
  sandbox.resetStats();
  await service.get('/sandbox/dossiers/etats?numeroPage=4');
  await clock.advance(59_999);
  t.equal(
    (await service.get('/sandbox/dossiers/etats?numeroPage=4')).headers.get('x-cache'),
    'HIT',
    'alive until its last millisecond',
  );
  await clock.advance(1);
  const after = await service.get('/sandbox/dossiers/etats?numeroPage=4');
  t.equal(after.headers.get('x-cache'), 'MISS', 'expired');
  t.equal(etatsCalls(), 2);
});

t.test('errors are not cached; uncached routes are not cached', async (t) => {
  sandbox.resetStats();
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 500, times: 1 });
  t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=5')).status, 500);
  const retry = await service.get('/sandbox/dossiers/etats?numeroPage=5');
  t.equal(retry.status, 200);
  t.equal(retry.headers.get('x-cache'), 'MISS');
  await service.get('/sandbox/status');
  await service.get('/sandbox/status');
  t.equal(
    sandbox.received.filter((r) => r.path === '/v1/status').length,
    2,
    'status (no cache lifetime) always calls upstream',
  );
});

t.test(
  'instances on one MongoDB share cache entries',
  { skip: !process.env.MONGODB_URL && 'MONGODB_URL not set' },
  async (t) => {
    const store = {
      type: 'mongodb' as const,
      url: process.env.MONGODB_URL!,
      database: `cache_${Date.now()}_${process.pid}`,
    };
    const one = await startService({ upstream: sandbox, config: { store } });
    const two = await startService({ upstream: sandbox, config: { store } });
    t.teardown(async () => {
      await one.close();
      await two.close();
    });
    sandbox.resetStats();
    const numero = sandbox.dataset.dossiers[5].numeroInterne;
    t.equal((await one.get(`/sandbox/dossiers?numeroInterne=${numero}`)).headers.get('x-cache'), 'MISS');
    const fromTwo = await two.get(`/sandbox/dossiers?numeroInterne=${numero}`);
    t.equal(fromTwo.headers.get('x-cache'), 'HIT', 'the second instance reads the first one entry');
    t.equal(fromTwo.body.numeroInterne, numero);
    t.equal(
      (await two.get(`/sandbox/dossiers?numeroInterne=${numero}`, { key: KEY_B })).headers.get('x-cache'),
      'MISS',
      'still per tenant',
    );
    t.equal(sandbox.received.length, 2);
  },
);
