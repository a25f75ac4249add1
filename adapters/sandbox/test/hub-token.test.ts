import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import t from 'tap';
import { startSandbox } from '../src/server/index.js';
import { classicHeaders } from './classic-client.js';
import { authHeaders, fetchToken, getJson, postForm } from './upstream-client.js';

const SECRET = 'a1'.repeat(32);
const OTHER = 'b2'.repeat(32);

interface GrantOptions {
  secret?: string;
  method?: string;
  iat?: number;
  exp?: number;
  jti?: string;
  alg?: string;
  drop?: string;
}

/** A grant as the hub makes it (DECISIONS D26): HS256 over the 32 bytes the hex secret encodes. */
async function grant(options: GrantOptions = {}): Promise<string> {
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    opcoId: 'sandbox',
    method: options.method ?? 'GET',
    route: 'GET /dossiers/etats',
    instanceId: 'api-1',
    iat,
    exp: options.exp ?? iat + 30,
    iss: 'opco-proxy-hub',
    jti: options.jti ?? randomUUID(),
  };
  if (options.drop) delete claims[options.drop];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .sign(Buffer.from(options.secret ?? SECRET, 'hex'));
}

const sandbox = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: SECRET });
t.teardown(() => sandbox.close());
const headers = authHeaders(await fetchToken(sandbox));
const call = async (hubToken?: string, path = '/v1/status') => {
  sandbox.resetStats();
  const r = await getJson(sandbox, path, hubToken === undefined ? headers : { ...headers, 'svc-hub-token': hubToken });
  t.equal(r.status, 200, 'never refused for its grant');
  return sandbox.received[0].hubToken!;
};

t.test('a good grant is valid and its claims recorded', async (t) => {
  const token = await grant({ jti: 'grant-1' });
  const check = await call(token);
  t.equal(check.valid, true);
  t.equal(check.reason, undefined);
  t.match(check.claims, {
    opcoId: 'sandbox',
    method: 'GET',
    route: 'GET /dossiers/etats',
    instanceId: 'api-1',
    iss: 'opco-proxy-hub',
    jti: 'grant-1',
  });
  t.equal(check.claims!.exp - check.claims!.iat, 30);
});

t.test('DISCONNECTED and a missing header are recorded as such', async (t) => {
  t.same(await call('DISCONNECTED'), { valid: false, reason: 'DISCONNECTED' });
  t.same(await call(), { valid: false, reason: 'missing' });
});

t.test('bad grants: signature, expiry, claims, method, replay, garbage', async (t) => {
  t.same(await call(await grant({ secret: OTHER })), { valid: false, reason: 'signature' });
  t.same(await call(await grant({ alg: 'HS512' })), { valid: false, reason: 'signature' }, 'only HS256');
  const old = Math.floor(Date.now() / 1000) - 120;
  const expired = await call(await grant({ iat: old }));
  t.equal(expired.reason, 'expired');
  t.equal(expired.valid, false);
  t.equal(expired.claims?.iat, old, 'claims of a genuine but expired grant are kept');
  const long = await call(await grant({ exp: Math.floor(Date.now() / 1000) + 3600 }));
  t.match(long, { valid: false, reason: 'claims' }, 'exp must be iat + 30');
  for (const claim of ['opcoId', 'route', 'instanceId', 'iss', 'jti', 'iat']) {
    t.match(await call(await grant({ drop: claim })), { valid: false, reason: 'claims' }, `without ${claim}`);
  }
  t.match(await call(await grant({ method: 'POST' })), { valid: false, reason: 'method', claims: { method: 'POST' } });
  const once = await grant();
  t.equal((await call(once)).valid, true);
  t.match(await call(once), { valid: false, reason: 'replayed' }, 'a grant is good for one call');
  t.same(await call('not.a.jwt'), { valid: false, reason: 'malformed' });
  t.same(await call('garbage'), { valid: false, reason: 'malformed' });
});

t.test('POST requests and the classic shape are checked too', async (t) => {
  sandbox.resetStats();
  const form = new FormData();
  form.append('infosFichier', JSON.stringify({ typeFichier: 'CERFA', objets: [] }));
  const r = await postForm(
    sandbox,
    '/v1/documents',
    { ...headers, 'svc-hub-token': await grant({ method: 'POST' }) },
    form,
  );
  t.equal(r.status, 201);
  t.equal(sandbox.received[0].hubToken!.valid, true);

  const classic = await startSandbox({ shape: 'classic', dossierCount: 10, factureCount: 2, hubSecret: SECRET });
  t.teardown(() => classic.close());
  const h = await classicHeaders(classic);
  await getJson(classic, '/api/v3/statut', { ...h, 'svc-hub-token': await grant() });
  await getJson(classic, '/api/v3/statut', { ...h, 'svc-hub-token': 'DISCONNECTED' });
  t.same(
    classic.received.map((e) => e.hubToken!.valid),
    [true, false],
  );
});

t.test('recorded even when the request is refused or faulted', async (t) => {
  sandbox.resetStats();
  sandbox.faults.add({ route: 'GET /v1/status', status: 503, times: 1 });
  t.equal((await getJson(sandbox, '/v1/status', { ...headers, 'svc-hub-token': await grant() })).status, 503);
  t.equal((await getJson(sandbox, '/v1/status', { 'svc-hub-token': await grant() })).status, 401);
  t.same(
    sandbox.received.map((e) => e.hubToken!.valid),
    [true, true],
  );
});

t.test('without hubSecret nothing is checked; a bad secret stops start-up', async (t) => {
  const plain = await startSandbox({ dossierCount: 5, factureCount: 1 });
  t.teardown(() => plain.close());
  await getJson(plain, '/v1/status', { ...authHeaders(await fetchToken(plain)), 'svc-hub-token': 'DISCONNECTED' });
  t.notOk('hubToken' in plain.received[0]);
  for (const bad of ['abc', 'g'.repeat(64), SECRET + '00']) {
    await t.rejects(startSandbox({ dossierCount: 5, factureCount: 1, hubSecret: bad }), RangeError, bad);
  }
});
