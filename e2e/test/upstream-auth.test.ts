// SPEC 5.2, D10: client-credentials token per opco, lazy, refreshed at 80% of its lifetime,
// one refresh in flight, one refresh-and-retry on 401, never shown to clients or logs.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService, KEY_A } from '../src/index.js';

t.test('one token serves many calls; concurrent first calls fetch it once', async (t) => {
  const service = await startService();
  t.teardown(() => service.close());
  const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => service.get(`/sandbox/dossiers/etats?numeroPage=${i + 1}`)));
  t.ok(replies.every((r) => r.status === 200));
  t.equal(service.sandbox.stats.tokenRequests, 1, 'a single token request');
});

t.test('the token is refreshed at 80% of its lifetime', async (t) => {
  const service = await startService({ sandbox: { tokenLifetimeS: 5 } });
  t.teardown(() => service.close());
  await service.get('/sandbox/dossiers/etats?numeroPage=1');
  await sleep(2000);
  await service.get('/sandbox/dossiers/etats?numeroPage=2');
  t.equal(service.sandbox.stats.tokenRequests, 1, 'still the first token at 40%');
  await sleep(2300);
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=3');
  t.equal(reply.status, 200);
  t.equal(service.sandbox.stats.tokenRequests, 2, 'refreshed past 80%, before expiry');
  const tokens = new Set(service.sandbox.received.map((r) => r.headers.authorization));
  t.equal(tokens.size, 2);
});

t.test('a 401 refreshes once and retries once; concurrent 401s share one refresh', async (t) => {
  const service = await startService();
  t.teardown(() => service.close());
  await service.get('/sandbox/dossiers/etats?numeroPage=1');
  service.sandbox.revokeTokens();
  const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => service.get(`/sandbox/dossiers/etats?numeroPage=${i + 2}`)));
  t.ok(replies.every((r) => r.status === 200), replies.map((r) => r.status).join(','));
  t.equal(service.sandbox.stats.tokenRequests, 2, 'one refresh for five 401s');
  const unauthorized = service.sandbox.received.filter((r) => r.headers.authorization === service.sandbox.received[0].headers.authorization);
  t.ok(unauthorized.length >= 2, 'the revoked token was rejected before the retry');
});

t.test('a 401 that persists after the retry gives 403 HTTP_ERROR, without looping', async (t) => {
  const service = await startService();
  t.teardown(() => service.close());
  service.sandbox.faults.add({ route: 'GET /v2/dossiers/etats', status: 401, body: { message: 'nope' } });
  const reply = await service.get('/sandbox/dossiers/etats');
  t.equal(reply.status, 403);
  t.equal(reply.body.code, 'HTTP_ERROR');
  t.equal(service.sandbox.stats.calls['GET /v2/dossiers/etats'], 2, 'first call and exactly one retry');
});

t.test('refused service credentials give a clear upstream error, and the token never leaks', async (t) => {
  const logs: string[] = [];
  const missing = await startService({ opcos: { broken: { clientSecretEnv: 'TEST_UNSET_SECRET' } } }).catch((err: Error) => err);
  t.match(String((missing as Error).message), /opcos\.broken\.clientSecretEnv/, 'a missing secret names its config key');

  const refused = await startService({ opcos: { broken: { clientSecretEnv: 'TEST_WRONG_SECRET' } }, env: { TEST_WRONG_SECRET: 'wrong-secret' } });
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
  t.notOk(logs.some((line) => line.includes(token)), 'not in the logs');
  t.notOk(logs.some((line) => line.includes(KEY_A)), 'API key masked in logs');
  t.ok(logs.some((line) => line.includes(KEY_A.slice(0, 4) + '****')), 'masked form logged');
});
