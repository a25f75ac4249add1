import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { startSandbox } from '../src/server/index.js';
import { API_KEY, authHeaders, fetchToken, getJson } from './upstream-client.js';

const sandbox = await startSandbox({ dossierCount: 20, factureCount: 5, tokenLifetimeS: 900 });
t.teardown(() => sandbox.close());

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

t.test('client credentials form gives a bearer token', async (t) => {
  sandbox.resetStats();
  const res = await fetch(
    sandbox.tokenUrl,
    form({ grant_type: 'client_credentials', client_id: 'proxy', client_secret: 's3cret' }),
  );
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  const body = (await res.json()) as Record<string, unknown>;
  t.equal(body['token_type'], 'Bearer');
  t.equal(body['expires_in'], 900);
  t.match(body['access_token'], /^[\w-]{20,}$/);
  t.equal(sandbox.tokenUrl, `${sandbox.url}/oauth/token`);
  t.equal(sandbox.stats.tokenRequests, 1);
  t.equal(sandbox.received.length, 0, 'token requests are not recorded');
  const other = await fetchToken(sandbox);
  t.not(other, body['access_token'], 'tokens are random');
  const status = await getJson(sandbox, '/v1/status', authHeaders(body['access_token'] as string));
  t.equal(status.status, 200);
});

t.test('HTTP Basic client authentication is accepted', async (t) => {
  const res = await fetch(sandbox.tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('proxy%20id:s%3Acret').toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  t.equal(res.status, 200);
  t.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
  const refused = await fetch(sandbox.tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('proxy:wrong-secret').toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  t.equal(refused.status, 401, 'refused secret in Basic credentials');
});

t.test('refused and malformed token requests', async (t) => {
  const wrong = await fetch(
    sandbox.tokenUrl,
    form({ grant_type: 'client_credentials', client_id: 'proxy', client_secret: 'wrong-secret' }),
  );
  t.equal(wrong.status, 401);
  t.same(await wrong.json(), { error: 'invalid_client' });
  const noSecret = await fetch(sandbox.tokenUrl, form({ grant_type: 'client_credentials', client_id: 'proxy' }));
  t.equal(noSecret.status, 401);
  const noGrant = await fetch(sandbox.tokenUrl, form({ client_id: 'proxy', client_secret: 'x' }));
  t.equal(noGrant.status, 400);
  t.equal(((await noGrant.json()) as { error: string }).error, 'invalid_request');
  const password = await fetch(
    sandbox.tokenUrl,
    form({ grant_type: 'password', client_id: 'proxy', client_secret: 'x' }),
  );
  t.equal(password.status, 400);
  t.equal(((await password.json()) as { error: string }).error, 'unsupported_grant_type');
  const get = await fetch(sandbox.tokenUrl);
  t.equal(get.status, 405);
});

t.test('routes need a valid bearer token', async (t) => {
  const none = await getJson(sandbox, '/v1/status', { 'x-api-key': API_KEY });
  t.equal(none.status, 401);
  t.same(none.body, { status: 'error', message: 'invalid token' });
  const forged = await getJson(sandbox, '/v1/status', authHeaders('not-a-token'));
  t.equal(forged.status, 401);
  const neither = await getJson(sandbox, '/v1/status', {});
  t.equal(neither.status, 401, 'token is checked before the key');
});

t.test('revokeTokens invalidates every issued token', async (t) => {
  const a = await fetchToken(sandbox);
  const b = await fetchToken(sandbox);
  t.equal((await getJson(sandbox, '/v1/status', authHeaders(a))).status, 200);
  sandbox.revokeTokens();
  t.equal((await getJson(sandbox, '/v1/status', authHeaders(a))).status, 401);
  t.equal((await getJson(sandbox, '/v1/status', authHeaders(b))).status, 401);
  const fresh = await fetchToken(sandbox);
  t.equal((await getJson(sandbox, '/v1/status', authHeaders(fresh))).status, 200, 'a new token works');
});

t.test('setTokenLifetime changes expires_in and expiry of new tokens', async (t) => {
  // Lifetimes on a frozen clock: a token is checked just before and at its expiry, never raced against it.
  const clock = new TestClock({ frozen: true });
  const own = await startSandbox({ dossierCount: 5, factureCount: 1, tokenLifetimeS: 900, clock });
  t.teardown(() => own.close());
  const old = await fetchToken(own);
  own.setTokenLifetime(0);
  const res = await fetch(own.tokenUrl, form({ grant_type: 'client_credentials', client_id: 'p', client_secret: 's' }));
  const body = (await res.json()) as { access_token: string; expires_in: number };
  t.equal(body.expires_in, 0);
  t.equal((await getJson(own, '/v1/status', authHeaders(body.access_token))).status, 401, 'already expired');
  t.equal((await getJson(own, '/v1/status', authHeaders(old))).status, 200, 'earlier token keeps its lifetime');
  own.setTokenLifetime(1);
  const short = await fetchToken(own);
  await clock.advance(999);
  t.equal((await getJson(own, '/v1/status', authHeaders(short))).status, 200, 'valid until its lifetime has passed');
  await clock.advance(1);
  t.equal((await getJson(own, '/v1/status', authHeaders(short))).status, 401, 'expired after its lifetime');
  t.equal((await getJson(own, '/v1/status', authHeaders(old))).status, 200, 'the 900 s token still valid');
});

t.test('X-API-KEY is required, and one value is refused', async (t) => {
  const token = await fetchToken(sandbox);
  const missing = await getJson(sandbox, '/v1/status', { authorization: `Bearer ${token}` });
  t.equal(missing.status, 403);
  t.equal(missing.body.status, 'error');
  const refused = await getJson(sandbox, '/v1/status', authHeaders(token, 'forbidden-key-000'));
  t.equal(refused.status, 403);
  t.same(refused.body, { status: 'error', message: 'clé API refusée' });
});
