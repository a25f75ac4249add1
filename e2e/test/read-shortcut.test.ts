// The read shortcut (issue 11): a read the cache holds in memory is answered at once (its
// shortcut, tried before its handler; on the early path once its URL is known, before the
// middleware chain), with the same answer the handler gives, and with every check kept: the key
// (allow-list), the tenant's rate (one token per request), tenant isolation, expiry, the access
// line and the request metrics. A `lookup` hook registered before the cache's counts its calls
// and shows what answered: the handler runs it, the shortcut does not (e2e/test/request-path.test.ts
// tells the paths apart).
import t from 'tap';
import { definePlugin, tenantHash } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import cache from '@opco-proxy/plugin-cache';
import { isErrorBody, startService, KEY_A, KEY_B, type Service } from '../src/index.js';

const PATH = '/sandbox/dossiers/etats?numeroPage=1';

async function serviceCountingLookups(
  t: { teardown(fn: () => unknown): void },
  config: Record<string, unknown> = {},
): Promise<{ service: Service; lookups: () => number; clock: TestClock; logs: string[] }> {
  let lookups = 0;
  const counter = definePlugin({
    name: 'lookup-counter',
    register: (api) => api.addHook('lookup', () => void (lookups += 1)),
  });
  const clock = new TestClock({ frozen: true });
  const logs: string[] = [];
  // The counter first, then the cache: on the chain, the counter sees every lookup, hits included.
  const service = await startService({
    clock,
    logs,
    config: { ...config, plugins: [] },
    opco: { cacheTtlS: { 'GET /dossiers/etats': 60 } },
    plugins: [counter, cache],
  });
  t.teardown(() => service.close());
  return { service, lookups: () => lookups, clock, logs };
}

t.test('a hit in memory is answered by the shortcut, as the chain answers it', async (t) => {
  const { service, lookups } = await serviceCountingLookups(t);
  const miss = await service.get(PATH, { headers: { 'x-request-id': 'first-read' } });
  t.equal(miss.headers.get('x-cache'), 'MISS');
  t.equal(lookups(), 1, 'the miss went through the chain');
  const hit = await service.get(PATH, { headers: { 'x-request-id': 'second-read' } });
  t.equal(lookups(), 1, 'the hit did not enter the chain');
  t.equal(hit.status, 200);
  t.equal(hit.headers.get('x-cache'), 'HIT');
  t.equal(hit.headers.get('x-request-id'), 'second-read', "the client's request id is echoed");
  for (const name of ['svc-api-version', 'content-type', 'content-length'])
    t.equal(hit.headers.get(name), miss.headers.get(name), name);
  t.equal(hit.text, miss.text, 'the same bytes');
  const other = await service.get('/sandbox/dossiers/etats?numeroPage=2');
  t.equal(other.headers.get('x-cache'), 'MISS', 'another query is another entry');
  t.equal(lookups(), 2);
  const head = await service.request('HEAD', PATH);
  t.equal(head.status, 200, 'HEAD takes the chain');
  t.equal(lookups(), 3);
  const chainAgain = await service.get(PATH, { headers: { 'x-request-id': 'third-read' } });
  t.equal(chainAgain.headers.get('x-cache'), 'HIT');
  t.equal(lookups(), 3, 'hits keep taking the shortcut');
});

t.test("another tenant is never answered from the first one's memory", async (t) => {
  const { service, lookups } = await serviceCountingLookups(t);
  await service.get(PATH);
  const b = await service.get(PATH, { key: KEY_B });
  t.equal(b.headers.get('x-cache'), 'MISS');
  t.equal(lookups(), 2, "B's read went through the chain");
  t.equal((await service.get(PATH, { key: KEY_B })).headers.get('x-cache'), 'HIT', 'then B has its own entry');
  t.equal(
    service.sandbox.received.filter((r) => r.path === '/v2/dossiers/etats').length,
    2,
    'each tenant made its own upstream call',
  );
});

t.test('a key refused by the allow-list is refused, not answered from memory', async (t) => {
  const { service } = await serviceCountingLookups(t, { allowedTenants: [tenantHash(KEY_A)] });
  t.equal((await service.get(PATH)).status, 200);
  t.equal((await service.get(PATH)).headers.get('x-cache'), 'HIT');
  isErrorBody(t, await service.get(PATH, { key: KEY_B }), 403, 'HTTP_ERROR');
  isErrorBody(t, await service.get(PATH, { key: null }), 403, 'HTTP_ERROR');
});

t.test('an expired answer is not served; the rate takes one token per request on either path', async (t) => {
  // Three tokens and (almost) no refill: the fourth request is refused whatever answered before.
  const { service, lookups, clock } = await serviceCountingLookups(t, {
    tenantRateLimit: { perSecond: 0.001, burst: 3 },
  });
  t.equal((await service.get(PATH)).headers.get('x-cache'), 'MISS');
  await clock.advance(61_000);
  const expired = await service.get(PATH);
  t.equal(expired.headers.get('x-cache'), 'MISS', 'expired in memory: the shortcut left it to the chain');
  t.equal(lookups(), 2);
  const hit = await service.get(PATH);
  t.equal(hit.status, 200, 'the expired read took one token, not two');
  t.equal(hit.headers.get('x-cache'), 'HIT');
  const refused = await service.get(PATH);
  isErrorBody(t, refused, 429, 'RATE_LIMITED');
  t.ok(refused.headers.get('retry-after'), 'with Retry-After');
});

t.test("a shortcut answer is logged and counted as the chain's are", async (t) => {
  const { service, logs } = await serviceCountingLookups(t);
  await service.get(PATH);
  logs.length = 0;
  await service.get(PATH, { headers: { 'x-request-id': 'logged-hit' } });
  const line = logs.map((l) => JSON.parse(l)).find((l) => l.requestId === 'logged-hit');
  t.match(line, {
    msg: 'request',
    method: 'GET',
    route: '/{opcoId}/dossiers/etats',
    operationId: 'listDossierEtats',
    status: 200,
  });
  t.equal(line.apiKey, `${KEY_A.slice(0, 4)}****`, 'the key masked');
  t.notOk(JSON.stringify(line).includes(KEY_A), 'never the whole key');
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  t.match(
    metrics,
    /opco_proxy_http_requests_total\{route="\/\{opcoId\}\/dossiers\/etats",method="GET",status="200"\} 2/,
  );
  t.match(metrics, /opco_proxy_cache_lookups_total\{opco="sandbox",result="memory"\} 1/);
});
