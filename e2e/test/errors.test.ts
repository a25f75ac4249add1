// Every error code reachable without jobs leaves in the SPEC 7 body with the right status.
import t from 'tap';
import type { PluginApi } from '@opco-proxy/core';
import { isErrorBody, startService, KEY_A } from '../src/index.js';

const service = await startService({
  config: {
    upstream: { timeoutMs: 500 },
    limits: { bodyBytes: 4096, fileBytes: 1024 },
  },
  opcos: { common: { adapter: 'common-api' } },
});
t.teardown(() => service.close());
const { sandbox } = service;
t.afterEach(() => sandbox.faults.clear());

t.test('403 HTTP_ERROR without, or with a malformed, X-API-KEY', async (t) => {
  isErrorBody(t, await service.get('/sandbox/dossiers/etats', { key: null }), 403, 'HTTP_ERROR');
  isErrorBody(t, await service.get('/sandbox/dossiers/etats', { key: 'short' }), 403, 'HTTP_ERROR');
  isErrorBody(t, await service.get('/sandbox/dossiers/etats', { key: 'x'.repeat(513) }), 403, 'HTTP_ERROR');
});

t.test('403 HTTP_ERROR with the upstream body when the upstream refuses the key', async (t) => {
  const reply = await service.get('/sandbox/dossiers/etats', { key: 'forbidden-key-000' });
  isErrorBody(t, reply, 403, 'HTTP_ERROR');
  t.ok(reply.body.upstream, 'upstream body carried');
});

t.test('404 NOT_FOUND for an unknown opcoId, an unknown route and a missing dossier', async (t) => {
  isErrorBody(t, await service.get('/nope/dossiers/etats'), 404, 'NOT_FOUND');
  isErrorBody(t, await service.get('/sandbox/nothing-here'), 404, 'NOT_FOUND');
  const missing = await service.get('/sandbox/dossiers?numeroInterne=DOS-1999-999999');
  isErrorBody(t, missing, 404, 'NOT_FOUND');
  t.ok(missing.body.upstream, 'upstream body carried');
});

t.test('501 NOT_SUPPORTED for routes absent from the common-api profile', async (t) => {
  isErrorBody(t, await service.get('/common/cfakeyinfo?siren=123456789&XAPIKEY=k'), 501, 'NOT_SUPPORTED');
  isErrorBody(t, await service.get('/common/factures/etats'), 501, 'NOT_SUPPORTED');
});

t.test('400 VALIDATION_ERROR with an errors array for every query rule', async (t) => {
  const cases = [
    '/sandbox/dossiers',
    '/sandbox/dossiers?numeroInterne=A&numeroExterne=B',
    '/sandbox/dossiers?numeroExterne=B',
    '/sandbox/dossiers?numeroDeca=C',
    '/sandbox/dossiers?numeroInterne=A&numeroExterne=B&numeroDeca=C',
    '/sandbox/dossiers/liste',
    `/sandbox/dossiers/liste?numerosInternes=${Array.from({ length: 51 }, (_, i) => `N${i}`).join(',')}`,
    '/sandbox/cfakeyinfo?siren=12345678&XAPIKEY=k',
    '/sandbox/cfakeyinfo?siren=123456789',
    '/sandbox/dossiers/etats?numeroPage=1&numeroPage=2',
  ];
  sandbox.resetStats();
  for (const path of cases) {
    const reply = await service.get(path);
    isErrorBody(t, reply, 400, 'VALIDATION_ERROR');
    t.ok(Array.isArray(reply.body.errors) && reply.body.errors.length > 0, `${path}: errors listed`);
  }
  t.equal(sandbox.received.length, 0, 'nothing reached the upstream');
});

t.test('upstream 5xx gives UPSTREAM_ERROR with the upstream status and body', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 503, body: { message: 'maintenance' }, times: 1 });
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=7');
  isErrorBody(t, reply, 503, 'UPSTREAM_ERROR');
  t.same(reply.body.upstream, { message: 'maintenance' });
});

t.test('upstream 429 gives UPSTREAM_ERROR 429 with its Retry-After', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 429, headers: { 'retry-after': '7' }, times: 1 });
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=8');
  isErrorBody(t, reply, 429, 'UPSTREAM_ERROR');
  t.equal(reply.headers.get('retry-after'), '7');
});

t.test('an upstream that does not answer in time gives 504 TIMEOUT', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', hang: true, times: 1 });
  isErrorBody(t, await service.get('/sandbox/dossiers/etats?numeroPage=9'), 504, 'TIMEOUT');
});

t.test('a network failure gives 502 NETWORK_ERROR', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', destroy: true, times: 1 });
  isErrorBody(t, await service.get('/sandbox/dossiers/etats?numeroPage=10'), 502, 'NETWORK_ERROR');
});

t.test('an unusable upstream answer gives 502 UPSTREAM_INVALID_RESPONSE', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', garbage: true, times: 1 });
  isErrorBody(t, await service.get('/sandbox/dossiers/etats?numeroPage=11'), 502, 'UPSTREAM_INVALID_RESPONSE');
  sandbox.faults.add({ route: 'GET /v2/dossiers', nullBody: true, times: 1 });
  const numero = (sandbox.dataset.dossiers[0] as { numeroInterne: string }).numeroInterne;
  isErrorBody(t, await service.get(`/sandbox/dossiers?numeroInterne=${numero}`), 502, 'UPSTREAM_INVALID_RESPONSE');
  sandbox.faults.add({ route: 'GET /v2/dossiers', status: 200, body: { status: 'success', engagement: 1 }, times: 1 });
  isErrorBody(t, await service.get(`/sandbox/dossiers?numeroInterne=${numero}`), 502, 'UPSTREAM_INVALID_RESPONSE');
});

t.test('a body over the limit gives 413 PAYLOAD_TOO_LARGE; broken JSON gives 400', async (t) => {
  const big = await service.request('POST', '/sandbox/dossiers', { body: { cerfa: { filler: 'x'.repeat(10_000) } } });
  isErrorBody(t, big, 413, 'PAYLOAD_TOO_LARGE');
  const broken = await service.request('POST', '/sandbox/dossiers', {
    rawBody: '{"cerfa": ',
    headers: { 'content-type': 'application/json' },
  });
  isErrorBody(t, broken, 400, 'VALIDATION_ERROR');
});

t.test('a drifting answer is still returned (D14) and counted for operators', async (t) => {
  const page = {
    status: 'success',
    total: 'many',
    count: 1,
    page: 1,
    EtatDossierResult: [{ numeroInterne: 42, etat: 'ENGAGE' }],
  };
  sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 200, body: page, times: 1 });
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=12', { key: KEY_A, drift: true });
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.total, 'many');
  const metrics = await service.get('/metrics', { key: null });
  t.match(metrics.text, /opco_proxy_response_drift_warnings_total\{opco="sandbox",route="GET \/dossiers\/etats"\} 1/);
});

t.test(
  'an unexpected failure gives 500 INTERNAL_ERROR without leaking its message, and the service lives on',
  async (t) => {
    const logs: string[] = [];
    let armed = true;
    const fragility = {
      name: 'fragile',
      register: (api: PluginApi) =>
        api.addHook('beforeCall', () => {
          if (armed) throw new Error('secret internal detail');
        }),
    };
    const fragile = await startService({ logs, plugins: [fragility] });
    t.teardown(() => fragile.close());
    const reply = await fragile.get('/sandbox/dossiers/etats?numeroPage=2');
    isErrorBody(t, reply, 500, 'INTERNAL_ERROR');
    t.notOk(reply.text.includes('secret internal detail'));
    t.ok(
      logs.some((line) => line.includes('secret internal detail')),
      'logged for operators',
    );
    armed = false;
    t.equal((await fragile.get('/sandbox/dossiers/etats?numeroPage=2')).status, 200, 'still serving');
  },
);

t.test('unknown hook names are refused at registration', async (t) => {
  const typo = { name: 'typo', register: (api: PluginApi) => api.addHook('onWhatever' as never, (() => {}) as never) };
  await t.rejects(startService({ plugins: [typo] }), /hook "onWhatever" is not supported/);
});
