import t from 'tap';
import { DEFAULT_AUTH, startSandbox } from '../src/server/index.js';
import { API_KEY, getJson } from './upstream-client.js';
import { askToken, tokenRequest, type Style } from './token-styles.js';

const STYLES: Style[] = ['form', 'basic', 'json'];
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'x-api-key': API_KEY });

t.test("default (common): any style, today's answer, every request logged", async (t) => {
  const sandbox = await startSandbox({ dossierCount: 10, factureCount: 2, tokenLifetimeS: 600 });
  t.teardown(() => sandbox.close());
  t.same(sandbox.auth, DEFAULT_AUTH.common);
  t.same(sandbox.auth, {
    mode: 'oauth',
    request: 'any',
    tokenPath: '/oauth/token',
    answer: { tokenField: 'access_token', typeField: 'token_type', expiresField: 'expires_in' },
  });
  for (const style of STYLES) {
    const r = await askToken(sandbox.tokenUrl, style);
    t.equal(r.status, 200, `${style} accepted`);
    t.strictSame(Object.keys(r.body), ['access_token', 'token_type', 'expires_in']);
    t.equal(r.body.expires_in, 600);
    t.equal((await getJson(sandbox, '/v1/status', bearer(r.body.access_token))).status, 200, `${style} token works`);
  }
  t.equal((await askToken(sandbox.tokenUrl, 'json', 'wrong-secret')).status, 401, 'refused secret in a JSON body');
  const none = await fetch(sandbox.tokenUrl, { method: 'POST', body: 'grant_type=client_credentials' });
  t.equal(none.status, 400, 'no content type, no Basic header: nothing to read');
  t.equal(sandbox.stats.tokenRequests, 5);
  t.match(sandbox.stats.tokenRequestsLog, [
    { style: 'form', clientId: 'proxy', status: 200, concurrent: 1 },
    { style: 'basic', clientId: 'proxy', status: 200, concurrent: 1 },
    { style: 'json', clientId: 'proxy', status: 200, concurrent: 1 },
    { style: 'json', status: 401 },
    { style: 'none', status: 400 },
  ]);
  t.ok(sandbox.stats.tokenRequestsLog.every((e) => typeof e.at === 'number'));
  const held = sandbox.stats.tokenRequestsLog;
  sandbox.resetStats();
  t.equal(held.length, 0, 'resetStats clears the log in place');
});

for (const only of STYLES) {
  t.test(`request: '${only}' accepts that style only`, async (t) => {
    const sandbox = await startSandbox({ dossierCount: 10, factureCount: 2, auth: { mode: 'oauth', request: only } });
    t.teardown(() => sandbox.close());
    t.equal(sandbox.tokenUrl, `${sandbox.url}/oauth/token`, "path of the shape's default");
    for (const style of STYLES) {
      const r = await askToken(sandbox.tokenUrl, style);
      if (style === only) {
        t.equal(r.status, 200, `${style} accepted`);
        t.equal((await getJson(sandbox, '/v1/status', bearer(r.body.access_token))).status, 200);
      } else {
        t.equal(r.status, 400, `${style} refused`);
        t.equal(r.body.error, 'invalid_request');
        t.match(r.body.error_description, /client credentials must be sent with/);
      }
    }
    const wrong = await askToken(sandbox.tokenUrl, only, 'wrong-secret');
    t.equal(wrong.status, 401, 'wrong credentials in the right style');
    t.same(wrong.body, { error: 'invalid_client' });
    const grant = await fetch(sandbox.tokenUrl, tokenRequest(only, 'proxy', 's', 'password'));
    t.equal(grant.status, 400);
    t.same(await grant.json(), { error: 'unsupported_grant_type' });
    t.same(
      sandbox.stats.tokenRequestsLog.map((e) => [e.style, e.status]),
      [...STYLES.map((s) => [s, s === only ? 200 : 400]), [only, 401], [only, 400]],
    );
  });
}

t.test('basic: the grant must come in a form body', async (t) => {
  const sandbox = await startSandbox({ dossierCount: 10, factureCount: 2, auth: { mode: 'oauth', request: 'basic' } });
  t.teardown(() => sandbox.close());
  const res = await fetch(sandbox.tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from('proxy:s').toString('base64')}`,
    },
    body: JSON.stringify({ grant_type: 'client_credentials' }),
  });
  t.equal(res.status, 400);
  t.equal(((await res.json()) as { error: string }).error, 'invalid_request');
  t.equal(sandbox.stats.tokenRequestsLog[0].style, 'basic');
});

t.test('renamed answer fields and another token path', async (t) => {
  const sandbox = await startSandbox({
    dossierCount: 10,
    factureCount: 2,
    tokenLifetimeS: 120,
    auth: {
      mode: 'oauth',
      tokenPath: '/connect/token',
      answer: { tokenField: 'token', expiresField: 'validity_seconds' },
    },
  });
  t.teardown(() => sandbox.close());
  t.equal(sandbox.tokenUrl, `${sandbox.url}/connect/token`);
  const r = await askToken(sandbox.tokenUrl, 'form');
  t.equal(r.status, 200);
  t.strictSame(Object.keys(r.body), ['token', 'validity_seconds'], 'no token-type field when typeField is not given');
  t.equal(r.body.validity_seconds, 120);
  t.equal((await getJson(sandbox, '/v1/status', bearer(r.body.token))).status, 200);
  const old = await fetch(`${sandbox.url}/oauth/token`, tokenRequest('form'));
  t.equal(old.status, 401, 'the old path is an ordinary (guarded) route now');
  t.equal(sandbox.stats.tokenRequests, 1);

  const typed = await startSandbox({
    dossierCount: 10,
    factureCount: 2,
    auth: { mode: 'oauth', answer: { tokenField: 'jeton', expiresField: 'duree', typeField: 'type' } },
  });
  t.teardown(() => typed.close());
  const answer = await askToken(typed.tokenUrl, 'basic');
  t.strictSame(answer.body, { jeton: answer.body.jeton, type: 'Bearer', duree: 3600 });
});

t.test('the log shows overlapping token requests, and what a fault did to them', async (t) => {
  const sandbox = await startSandbox({ dossierCount: 10, factureCount: 2 });
  t.teardown(() => sandbox.close());
  // The second request leaves as soon as the sandbox has logged the first (checked at each turn
  // of the event loop, not after a fixed delay); the first is held long enough for the second
  // to get there on a loaded machine.
  sandbox.faults.add({ route: 'POST /oauth/token', latencyMs: 500, times: 1 });
  const firstArrived = async () => {
    while (sandbox.stats.tokenRequestsLog.length === 0) await new Promise((r) => setImmediate(r));
  };
  await Promise.all([
    askToken(sandbox.tokenUrl, 'form'),
    firstArrived().then(() => askToken(sandbox.tokenUrl, 'basic')),
  ]);
  t.match(sandbox.stats.tokenRequestsLog, [
    { style: 'form', concurrent: 1, status: 200 },
    { style: 'basic', concurrent: 2, status: 200 },
  ]);
  const next = await askToken(sandbox.tokenUrl, 'json');
  t.equal(next.status, 200);
  t.equal(sandbox.stats.tokenRequestsLog[2].concurrent, 1, 'back to one at a time');
  sandbox.faults.add({ route: 'POST /oauth/token', status: 503, times: 1 });
  t.equal((await askToken(sandbox.tokenUrl, 'form')).status, 503);
  t.match(
    sandbox.stats.tokenRequestsLog[3],
    { status: 503, style: 'none' },
    'a fault answers before the request is read',
  );
});

t.test('api-key mode: a static header instead of a bearer token', async (t) => {
  const sandbox = await startSandbox({
    dossierCount: 10,
    factureCount: 2,
    auth: { mode: 'api-key', header: 'X-Gateway-Key', key: 'gw-secret-1' },
  });
  t.teardown(() => sandbox.close());
  t.equal(sandbox.tokenUrl, '', 'no token endpoint');
  t.same(sandbox.auth, { mode: 'api-key', header: 'X-Gateway-Key', key: 'gw-secret-1' });
  const ok = await getJson(sandbox, '/v1/status', { 'x-gateway-key': 'gw-secret-1', 'x-api-key': API_KEY });
  t.equal(ok.status, 200);
  t.same(ok.body, { status: 'UP', versions: ['1.0', '1.1'] });
  const wrong = await getJson(sandbox, '/v1/status', { 'x-gateway-key': 'gw-secret-2', 'x-api-key': API_KEY });
  t.equal(wrong.status, 401);
  t.same(wrong.body, { status: 'error', message: 'missing or invalid X-Gateway-Key' });
  t.equal(wrong.headers.get('www-authenticate'), null);
  t.equal((await getJson(sandbox, '/v1/status', { 'x-api-key': API_KEY })).status, 401, 'missing header');
  const token = await askToken(`${sandbox.url}/oauth/token`, 'form');
  t.equal(token.status, 401, 'no token endpoint: the path is guarded like any other');
  t.equal(
    (await getJson(sandbox, '/v1/status', { authorization: 'Bearer x', 'x-api-key': API_KEY })).status,
    401,
    'a bearer token is no use',
  );
  t.equal(
    (await getJson(sandbox, '/v1/status', { 'x-gateway-key': 'gw-secret-1' })).status,
    403,
    'X-API-KEY is still required',
  );
  const form = await fetch(`${sandbox.url}/oauth/token`, {
    ...tokenRequest('form'),
    headers: {
      'x-gateway-key': 'gw-secret-1',
      'x-api-key': API_KEY,
      'content-type': 'application/x-www-form-urlencoded',
    },
  });
  t.equal(form.status, 404);
  t.equal(sandbox.stats.tokenRequests, 0);
  t.same(sandbox.stats.tokenRequestsLog, []);
  t.equal(sandbox.received.length, 7, 'every request is an ordinary, recorded one');
});

t.test('classic shape: its own default auth, and overrides on top of it', async (t) => {
  const classic = await startSandbox({ shape: 'classic', dossierCount: 10, factureCount: 2, tokenLifetimeS: 900 });
  t.teardown(() => classic.close());
  t.same(classic.auth, {
    mode: 'oauth',
    request: 'basic',
    tokenPath: '/auth/token',
    answer: { tokenField: 'token', expiresField: 'validity_seconds' },
  });
  t.equal(classic.tokenUrl, `${classic.url}/auth/token`);
  const r = await askToken(classic.tokenUrl, 'basic');
  t.strictSame(r.body, { token: r.body.token, validity_seconds: 900 });
  t.equal((await askToken(classic.tokenUrl, 'form')).status, 400, 'form refused');
  t.equal((await askToken(classic.tokenUrl, 'basic', 'wrong-secret')).status, 401);
  const status = await getJson(classic, '/api/v3/statut', bearer(r.body.token));
  t.equal(status.status, 200);
  const refused = await getJson(classic, '/api/v3/statut', bearer('nope'));
  t.equal(refused.status, 401);
  t.same(refused.body, { erreur: 'Authentification requise : jeton absent, invalide ou expiré' });

  const json = await startSandbox({
    shape: 'classic',
    dossierCount: 10,
    factureCount: 2,
    auth: { mode: 'oauth', request: 'json' },
  });
  t.teardown(() => json.close());
  t.same(json.auth, {
    mode: 'oauth',
    request: 'json',
    tokenPath: '/auth/token',
    answer: { tokenField: 'token', expiresField: 'validity_seconds' },
  });
  t.equal((await askToken(json.tokenUrl, 'json')).status, 200);
  t.equal((await askToken(json.tokenUrl, 'basic')).status, 400);

  const keyed = await startSandbox({
    shape: 'classic',
    dossierCount: 10,
    factureCount: 2,
    auth: { mode: 'api-key', header: 'X-Gateway-Key', key: 'k' },
  });
  t.teardown(() => keyed.close());
  const missing = await getJson(keyed, '/api/v3/statut', { 'x-api-key': API_KEY });
  t.same(missing.body, { erreur: 'Authentification requise : en-tête X-Gateway-Key absent ou invalide' });
  t.equal((await getJson(keyed, '/api/v3/statut', { 'x-gateway-key': 'k', 'x-api-key': API_KEY })).status, 200);
});

t.test('an unusable auth option stops start-up', async (t) => {
  const bad: unknown[] = [
    { mode: 'oauth', request: 'cookie' },
    { mode: 'oauth', tokenPath: 'oauth/token' },
    { mode: 'oauth', tokenPath: '/_sandbox/advance' },
    { mode: 'oauth', answer: { tokenField: 'token', expiresField: 'token' } },
    { mode: 'oauth', answer: { tokenField: '', expiresField: 'e' } },
    { mode: 'api-key', header: 'X Gateway', key: 'k' },
    { mode: 'api-key', header: 'X-Gateway-Key', key: '' },
    { mode: 'saml' },
  ];
  for (const auth of bad) {
    await t.rejects(
      startSandbox({ dossierCount: 5, factureCount: 1, auth: auth as never }),
      TypeError,
      JSON.stringify(auth),
    );
  }
  await t.rejects(startSandbox({ dossierCount: 5, factureCount: 1, shape: 'soap' as never }), TypeError);
});
