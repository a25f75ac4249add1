// SPEC 5.2, D10 and the profile's authentication strategy: OAuth client credentials (form body;
// HTTP Basic with a renamed answer) fetched lazily, refreshed at 80% of their lifetime, one
// request in flight, one refresh-and-retry on 401 admitted as a call of its own; a static API-key
// header, never retried; none of them ever shown to clients or logs. Time is moved with a
// TestClock, not slept.
import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { fixtureAdapter, startService, KEY_A, type ServiceOptions } from '../src/index.js';

interface TokenStrategy {
  name: string;
  style: 'form' | 'basic';
  options: () => ServiceOptions;
}

const TOKEN_STRATEGIES: TokenStrategy[] = [
  { name: 'form body (the default)', style: 'form', options: () => ({}) },
  {
    name: 'HTTP Basic, token answer fields renamed',
    style: 'basic',
    options: () => ({
      opco: { adapter: fixtureAdapter('basic-auth-adapter') },
      sandbox: {
        auth: { mode: 'oauth', request: 'basic', answer: { tokenField: 'token', expiresField: 'validity_seconds' } },
      },
    }),
  },
];

for (const strategy of TOKEN_STRATEGIES) {
  t.test(`OAuth client credentials, ${strategy.name}`, async (t) => {
    t.test('one token serves many calls; concurrent first calls fetch it once', async (t) => {
      const service = await startService(strategy.options());
      t.teardown(() => service.close());
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) => service.get(`/sandbox/dossiers/etats?numeroPage=${i + 1}`)),
      );
      t.ok(
        replies.every((r) => r.status === 200),
        replies.map((r) => r.status).join(','),
      );
      t.equal(service.sandbox.stats.tokenRequests, 1, 'a single token request');
      t.same(
        service.sandbox.stats.tokenRequestsLog.map((l) => [l.style, l.concurrent]),
        [[strategy.style, 1]],
        `sent as ${strategy.style}`,
      );
    });

    t.test('the token is refreshed at 80% of its lifetime', async (t) => {
      // Frozen: 79% is a second from the refresh, which real time flowing under a loaded machine
      // (the first call's own round trips) could eat into.
      const clock = new TestClock({ frozen: true });
      const options = strategy.options();
      const service = await startService({ ...options, clock, sandbox: { ...options.sandbox, tokenLifetimeS: 100 } });
      t.teardown(() => service.close());
      await service.get('/sandbox/dossiers/etats?numeroPage=1');
      await clock.advance(79_000);
      await service.get('/sandbox/dossiers/etats?numeroPage=2');
      t.equal(service.sandbox.stats.tokenRequests, 1, 'still the first token at 79%');
      await clock.advance(2_000);
      const reply = await service.get('/sandbox/dossiers/etats?numeroPage=3');
      t.equal(reply.status, 200);
      t.equal(service.sandbox.stats.tokenRequests, 2, 'refreshed past 80%, before expiry');
      t.equal(new Set(service.sandbox.received.map((r) => r.headers.authorization)).size, 2);
    });

    t.test('a 401 refreshes once and retries once; concurrent 401s share one refresh', async (t) => {
      const service = await startService(strategy.options());
      t.teardown(() => service.close());
      await service.get('/sandbox/dossiers/etats?numeroPage=1');
      service.sandbox.revokeTokens();
      const replies = await Promise.all(
        Array.from({ length: 5 }, (_, i) => service.get(`/sandbox/dossiers/etats?numeroPage=${i + 2}`)),
      );
      t.ok(
        replies.every((r) => r.status === 200),
        replies.map((r) => r.status).join(','),
      );
      t.equal(service.sandbox.stats.tokenRequests, 2, 'one refresh for five 401s');
      const revoked = service.sandbox.received[0].headers.authorization;
      t.ok(
        service.sandbox.received.filter((r) => r.headers.authorization === revoked).length >= 2,
        'the revoked token was rejected before the retry',
      );
    });

    t.test(
      'a 401 that persists after the retry gives 403 HTTP_ERROR; the retry is a call of its own in the budget',
      async (t) => {
        const service = await startService({
          ...strategy.options(),
          opco: { ...strategy.options().opco, rateLimit: { limit: 4, windowMs: 60_000 } },
        });
        t.teardown(() => service.close());
        // The tenant's key accepted first: an unproven one has a single call of this budget (P13).
        t.equal(
          (await service.get('/sandbox/cfakeyinfo?siren=123456789&XAPIKEY=k')).status,
          200,
          'the first call of a budget of 4',
        );
        service.sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 401, body: { message: 'nope' } });
        const reply = await service.get('/sandbox/dossiers/etats');
        t.equal(reply.status, 403);
        t.equal(reply.body.code, 'HTTP_ERROR');
        t.equal(service.sandbox.stats.calls['GET /v2/dossiers/etats'], 2, 'first call and exactly one retry');
        service.sandbox.faults.clear();
        t.equal(
          (await service.get('/sandbox/dossiers/etats?numeroPage=2')).status,
          200,
          'the fourth call of a budget of 4: a 401 after a fresh token does not refuse the key',
        );
        t.equal(
          (await service.get('/sandbox/dossiers/etats?numeroPage=3')).status,
          429,
          'a fifth does not fit: the retry was counted',
        );
      },
    );
  });
}

t.test('a static API-key header: sent on every call, nothing to refresh, a 401 not retried', async (t) => {
  const logs: string[] = [];
  const service = await startService({
    logs,
    opco: { adapter: fixtureAdapter('api-key-adapter'), apiKeyEnv: 'GW_KEY' },
    env: { GW_KEY: 'gateway-key-123456' },
    sandbox: { auth: { mode: 'api-key', header: 'X-Gateway-Key', key: 'gateway-key-123456' } },
  });
  t.teardown(() => service.close());
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=1');
  t.equal(reply.status, 200, reply.text);
  t.equal(service.sandbox.received.at(-1)!.headers['x-gateway-key'], 'gateway-key-123456');
  t.equal(service.sandbox.received.at(-1)!.headers['x-api-key'], KEY_A, 'the CFA key still forwarded in X-API-KEY');
  t.equal(service.sandbox.stats.tokenRequests, 0, 'no token endpoint');
  service.sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 401, body: { message: 'nope' }, times: 1 });
  const before = service.sandbox.stats.calls['GET /v2/dossiers/etats'] ?? 0;
  const refused = await service.get('/sandbox/dossiers/etats?numeroPage=2');
  t.equal(refused.status, 403);
  t.equal(service.sandbox.stats.calls['GET /v2/dossiers/etats'] - before, 1, 'not retried: nothing to refresh');
  t.notOk(
    logs.some((line) => line.includes('gateway-key-123456')),
    'the key never in logs',
  );
  const missing = await startService({ opco: { adapter: fixtureAdapter('api-key-adapter') } }).catch(
    (err: Error) => err,
  );
  t.match(
    String((missing as Error).message),
    /opcos\.sandbox\.apiKeyEnv: required by the api-key-header authentication/,
    'its config key named',
  );
});

t.test('refused service credentials give a clear upstream error, and the token never leaks', async (t) => {
  const logs: string[] = [];
  const missing = await startService({ opcos: { broken: { clientSecretEnv: 'TEST_UNSET_SECRET' } } }).catch(
    (err: Error) => err,
  );
  t.match(
    String((missing as Error).message),
    /opcos\.broken\.clientSecretEnv/,
    'a missing secret names its config key',
  );

  const refused = await startService({
    opcos: { broken: { clientSecretEnv: 'TEST_WRONG_SECRET' } },
    env: { TEST_WRONG_SECRET: 'wrong-secret' },
  });
  const answer = await refused.get('/broken/dossiers/etats');
  t.equal(answer.status, 502, answer.text);
  t.equal(answer.body.code, 'UPSTREAM_ERROR');
  t.match(answer.body.description, /authentication of broken failed/);
  t.notOk(answer.text.includes('wrong-secret'), 'the client secret never shows');
  await refused.close();

  const ok = await startService({ logs });
  t.teardown(() => ok.close());
  const reply = await ok.get('/sandbox/dossiers/etats', { key: KEY_A });
  t.equal(reply.status, 200);
  const token = String(ok.sandbox.received.at(-1)!.headers.authorization).replace('Bearer ', '');
  t.notOk(reply.text.includes(token), 'not in the answer');
  t.notOk(
    logs.some((line) => line.includes(token)),
    'not in the logs',
  );
  t.notOk(
    logs.some((line) => line.includes(KEY_A)),
    'API key masked in logs',
  );
  t.ok(
    logs.some((line) => line.includes(KEY_A.slice(0, 4) + '****')),
    'masked form logged',
  );
});
