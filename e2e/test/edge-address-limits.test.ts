// Issue 27 (P13): the per-address limits of the service's own edge, over real sockets from two
// loopback addresses: wrong operator keys back off on their address while the right key works
// from another at once; malformed tenant keys and unproven keys spend their address's tokens.
import t from 'tap';
import { Agent, request } from 'undici';
import { TestClock } from '@opco-proxy/core/testing';
import { startService, KEY_A } from '../src/index.js';

const ADMIN_KEY = 'edge-operator-key-0123456789abcdef0123';
const service = await startService({
  env: { OPCO_PROXY_ADMIN_KEY: ADMIN_KEY },
  config: { addressRateLimit: { perSecond: 2, burst: 20, freeFailures: 5, maxBackoffS: 300 } },
});
const elsewhere = new Agent({ localAddress: '127.0.0.2' });
t.teardown(async () => {
  await service.close();
  await elsewhere.close();
});

async function get(path: string, headers: Record<string, string>, dispatcher?: Agent) {
  const answer = await request(service.url + path, { headers, dispatcher });
  return {
    status: answer.statusCode,
    retryAfter: answer.headers['retry-after'],
    body: (await answer.body.json()) as { code: string },
  };
}

t.test(
  '300 wrong operator keys from one address: 5 answered 401, then 429 with Retry-After; the right key works from another address',
  async (t) => {
    const statuses: number[] = [];
    let lastRetryAfter: unknown;
    for (let i = 0; i < 300; i++) {
      const reply = await get('/admin/queues', { authorization: `Bearer wrong-key-${i}-0123456789abcdef0123` });
      statuses.push(reply.status);
      if (reply.status === 429) {
        t.equal(reply.body.code, 'RATE_LIMITED');
        lastRetryAfter = reply.retryAfter;
      }
    }
    t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'the free failures');
    t.ok(
      statuses.slice(6).every((status) => status === 429),
      'then every guess is refused before its key is compared',
    );
    t.ok(Number(lastRetryAfter) >= 1, `Retry-After: ${String(lastRetryAfter)}`);
    t.equal(
      (await get('/admin/queues', { authorization: `Bearer ${ADMIN_KEY}` }, elsewhere)).status,
      200,
      'the operator, from another address, at once',
    );
    t.equal(
      (await get('/admin/queues', { authorization: `Bearer ${ADMIN_KEY}` })).status,
      429,
      'the guessing address waits out its backoff, right key or not',
    );
  },
);

t.test("the client address is the socket's: a request from 127.0.0.2 is recorded from there", async (t) => {
  const created = await request(`${service.url}/webhooks`, {
    method: 'POST',
    dispatcher: elsewhere,
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    body: JSON.stringify({ callbackUrl: 'http://127.0.0.1:9/from-elsewhere', events: ['job.completed'] }),
  });
  const text = await created.body.text();
  t.equal(created.statusCode, 201, text);
  const { id } = JSON.parse(text) as { id: string };
  const records = (await service.get('/audit?action=createWebhook')).body.items as Array<{
    targets: { webhookId?: string };
    clientAddress: string;
  }>;
  t.equal(records.find((r) => r.targets.webhookId === id)?.clientAddress, '127.0.0.2');
});

t.test("malformed and unproven tenant keys spend their address's tokens; a proven key does not", async (t) => {
  t.equal(
    (await get('/sandbox/dossiers/etats', { 'x-api-key': KEY_A }, elsewhere)).status,
    200,
    'a CFA whose key the upstream accepts',
  );
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++)
    statuses.push((await get('/webhooks', { 'x-api-key': `short${i % 10}` }, elsewhere)).status);
  t.ok(
    statuses.includes(403) && statuses.includes(429),
    `403 for the malformed keys, then 429 once the address's bucket is empty: ${[...new Set(statuses)].join(', ')}`,
  );
  for (let i = 0; i < 5; i++)
    t.equal(
      (await get('/sandbox/dossiers/etats', { 'x-api-key': KEY_A }, elsewhere)).status,
      200,
      'the proven CFA on the same address is not slowed',
    );
  t.equal(
    (await get('/sandbox/dossiers/etats', { 'x-api-key': 'never-seen-key-000001' }, elsewhere)).status,
    429,
    "an unproven key's upstream read from that address is",
  );
  t.equal(
    (await get('/webhooks', { 'x-api-key': 'never-seen-key-000001' }, elsewhere)).status,
    200,
    'its own records cost nothing: never throttled by its standing (issue 37)',
  );
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  t.match(metrics, /opco_proxy_address_refusals_total\{reason="backoff"\} [1-9]/);
  t.match(metrics, /opco_proxy_address_refusals_total\{reason="failed-auth"\} [1-9]/);
});

t.test('a key the upstream refused is answered 403 here for refusedTtlS, then tried again', async (t) => {
  const clock = new TestClock();
  const gated = await startService({
    clock,
    sandbox: { acceptedKeys: [KEY_A] },
    config: { tenantKeys: { refusedTtlS: 300 } },
  });
  t.teardown(() => gated.close());
  const stranger = 'refused-stranger-key-01';
  const upstreamCalls = () => gated.sandbox.received.filter((r) => r.headers['x-api-key'] === stranger).length;
  for (let i = 0; i < 3; i++) {
    const reply = await gated.get('/sandbox/dossiers/etats', { key: stranger });
    t.equal(reply.status, 403);
    t.equal(reply.body.code, 'HTTP_ERROR');
  }
  t.equal(upstreamCalls(), 1, 'sent three times, the key reached the upstream once');
  t.match(
    (await gated.get('/sandbox/dossiers/etats', { key: stranger })).body.description,
    /refused this X-API-KEY lately/,
  );
  t.match(await (await fetch(`${gated.url}/metrics`)).text(), /opco_proxy_refused_key_hits_total\{opco="sandbox"\} 3/);
  await clock.advance(300_000);
  t.equal((await gated.get('/sandbox/dossiers/etats', { key: stranger })).status, 403);
  t.equal(upstreamCalls(), 2, 'once the period is over, the upstream is asked again (a renewed key would pass)');
});

t.test('X-Forwarded-For is believed behind trustedProxies only, read from its right end', async (t) => {
  const proxied = await startService({ config: { trustedProxies: ['127.0.0.1/32'] } });
  t.teardown(() => proxied.close());
  const create = async (forwarded: string, dispatcher?: Agent) => {
    const answer = await request(`${proxied.url}/webhooks`, {
      method: 'POST',
      dispatcher,
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', 'x-forwarded-for': forwarded },
      body: JSON.stringify({ callbackUrl: 'http://127.0.0.1:9/proxied', events: ['job.completed'] }),
    });
    return ((await answer.body.json()) as { id: string }).id;
  };
  const viaProxy = await create('6.6.6.6, 198.51.100.7');
  const direct = await create('6.6.6.6', elsewhere);
  const records = (await proxied.get('/audit?action=createWebhook')).body.items as Array<{
    targets: { webhookId?: string };
    clientAddress: string;
  }>;
  t.equal(
    records.find((r) => r.targets.webhookId === viaProxy)?.clientAddress,
    '198.51.100.7',
    'the hop the trusted proxy saw, not what the client wrote',
  );
  t.equal(
    records.find((r) => r.targets.webhookId === direct)?.clientAddress,
    '127.0.0.2',
    'an untrusted peer cannot forward',
  );
});
