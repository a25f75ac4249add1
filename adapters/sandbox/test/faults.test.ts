import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { startSandbox } from '../src/server/index.js';
import { authHeaders, fetchToken, getJson } from './upstream-client.js';

const sandbox = await startSandbox({ dossierCount: 40, factureCount: 10 });
t.teardown(() => sandbox.close());
const headers = authHeaders(await fetchToken(sandbox));
t.afterEach(() => sandbox.faults.clear());

t.test('status fault with body and headers, consumed per request', async (t) => {
  sandbox.faults.add({
    route: 'GET /v2/dossiers/etats',
    times: 2,
    status: 503,
    body: { status: 'error', message: 'maintenance' },
    headers: { 'retry-after': '1' },
  });
  for (let i = 0; i < 2; i++) {
    const r = await getJson(sandbox, '/v2/dossiers/etats?numeroPage=1', headers);
    t.equal(r.status, 503);
    t.same(r.body, { status: 'error', message: 'maintenance' });
    t.equal(r.headers.get('retry-after'), '1');
  }
  const third = await getJson(sandbox, '/v2/dossiers/etats?numeroPage=1', headers);
  t.equal(third.status, 200, 'exhausted after `times`');
  t.equal(third.headers.get('retry-after'), null);
});

t.test('default fault body, infinite times, route prefix and other routes untouched', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers', status: 500 });
  for (let i = 0; i < 3; i++) {
    const r = await getJson(sandbox, '/v2/dossiers/etats', headers);
    t.equal(r.status, 500);
    t.same(r.body, { status: 'error', message: 'injected' });
  }
  t.equal(
    (await getJson(sandbox, `/v2/dossiers?numeroInterne=${sandbox.dataset.dossiers[0].numeroInterne}`, headers)).status,
    500,
    'prefix match',
  );
  t.equal((await getJson(sandbox, '/v1/status', headers)).status, 200);
  sandbox.faults.clear();
  t.equal((await getJson(sandbox, '/v2/dossiers/etats', headers)).status, 200, 'clear() removes it');
});

t.test('a route ending in $ matches that route only, not the routes it is a prefix of', async (t) => {
  const numero = sandbox.dataset.dossiers[0].numeroInterne;
  sandbox.faults.add({ route: 'GET /v2/dossiers$', status: 500 });
  t.equal(
    (await getJson(sandbox, `/v2/dossiers?numeroInterne=${numero}`, headers)).status,
    500,
    'the exact route, whatever its query',
  );
  t.equal((await getJson(sandbox, '/v2/dossiers/etats', headers)).status, 200, 'a longer path is spared');
});

t.test('faults apply before authentication, and are recorded', async (t) => {
  sandbox.resetStats();
  sandbox.faults.add({ status: 429, times: 1, headers: { 'retry-after': '2' } });
  const r = await getJson(sandbox, '/v1/status', {});
  t.equal(r.status, 429);
  t.equal(r.headers.get('retry-after'), '2');
  t.equal((await getJson(sandbox, '/v1/status', {})).status, 401, 'then the normal answer');
  t.equal(sandbox.received.length, 2);
  t.equal(sandbox.stats.calls['GET /v1/status'], 2);
});

t.test('a catch-all fault leaves the token route alone; an exact one hits it', async (t) => {
  sandbox.faults.add({ status: 500 });
  t.type(await fetchToken(sandbox), 'string');
  sandbox.faults.clear();
  sandbox.faults.add({ route: 'POST /oauth/token', status: 503, times: 1 });
  await t.rejects(fetchToken(sandbox), /503/);
  t.type(await fetchToken(sandbox), 'string');
});

t.test('latency delays a normal answer; headers ride along', async (t) => {
  sandbox.faults.add({ route: 'GET /v1/status', latencyMs: 300, times: 1, headers: { 'x-sandbox-slow': 'yes' } });
  const start = Date.now();
  const r = await getJson(sandbox, '/v1/status', headers);
  const elapsed = Date.now() - start;
  t.ok(elapsed >= 280, `took ${elapsed} ms`);
  t.equal(r.status, 200);
  t.equal(r.body.status, 'UP');
  t.equal(r.headers.get('x-sandbox-slow'), 'yes');
  const next = await getJson(sandbox, '/v1/status', headers);
  t.equal(next.headers.get('x-sandbox-slow'), null, 'the fault was used up: the next request is a plain one');
});

t.test('latency combined with a status', async (t) => {
  sandbox.faults.add({ route: 'GET /v1/status', latencyMs: 150, status: 502, times: 1 });
  const start = Date.now();
  const r = await getJson(sandbox, '/v1/status', headers);
  t.equal(r.status, 502);
  t.ok(Date.now() - start >= 140);
});

t.test('garbage: 200 with HTML', async (t) => {
  sandbox.faults.add({ route: 'GET /v1/status', garbage: true, times: 1 });
  const res = await fetch(`${sandbox.url}/v1/status`, { headers });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  const text = await res.text();
  t.match(text, /^<html>/);
  t.throws(() => JSON.parse(text));
});

t.test('nullBody: 200 with JSON null', async (t) => {
  sandbox.faults.add({ route: 'GET /v2/dossiers', nullBody: true, times: 1 });
  const res = await fetch(`${sandbox.url}/v2/dossiers?numeroInterne=x`, { headers });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.equal(await res.text(), 'null');
});

t.test('destroy: the client sees a network error', async (t) => {
  sandbox.faults.add({ route: 'GET /v1/status', destroy: true, times: 1 });
  await t.rejects(fetch(`${sandbox.url}/v1/status`, { headers }), TypeError);
  t.equal((await getJson(sandbox, '/v1/status', headers)).status, 200, 'server still serves afterwards');
});

t.test('hang: the client times out and close() still resolves', async (t) => {
  // A frozen clock: the 60 s latency below can never end by itself, whatever the machine's pace.
  const own = await startSandbox({ dossierCount: 10, factureCount: 2, clock: new TestClock({ frozen: true }) });
  const h = authHeaders(await fetchToken(own));
  own.faults.add({ route: 'GET /v1/status', hang: true });
  own.faults.add({ route: 'GET /v1/cfakeyinfo', latencyMs: 60_000 });
  const start = Date.now();
  await t.rejects(fetch(`${own.url}/v1/status`, { headers: h, signal: AbortSignal.timeout(300) }), {
    name: 'TimeoutError',
  });
  t.ok(Date.now() - start >= 280, 'it really hung until the client gave up');
  // A second hanging request stays open on the server while close() runs, as does a long latency.
  const pending = fetch(`${own.url}/v1/status`, { headers: h }).then(
    () => 'answered',
    () => 'cut',
  );
  const slow = fetch(`${own.url}/v1/cfakeyinfo?siren=123456789&XAPIKEY=x`, { headers: h }).then(
    () => 'answered',
    () => 'cut',
  );
  // Both on the server (recorded, their fault taken) before close() runs, whatever the machine's pace.
  const arrived = () =>
    own.received.filter((r) => r.path === '/v1/status').length === 2 &&
    own.received.some((r) => r.path === '/v1/cfakeyinfo');
  // Checked at each turn of the event loop, not on a timer (as auth-modes.test.ts waits for a token request).
  while (!arrived()) await new Promise((r) => setImmediate(r));
  // close() waits neither for the request that never ends nor for the latency the frozen clock
  // never ends: were it to wait for either, it would never resolve and tap's timeout fails the test.
  t.equal(await own.close().then(() => 'closed'), 'closed', 'close ends both at once');
  t.equal(await pending, 'cut');
  t.equal(await slow, 'cut');
  await own.close(); // idempotent
});
