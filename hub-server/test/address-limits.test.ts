// Failed authentications at the hub (issue 27), with core's AddressLimits: wrong admin keys back
// off per client address while the right key works at once from any other; unknown hub keys at the
// WebSocket upgrade take the address's tokens, then get a plain 429 with Retry-After, never a 101;
// X-Forwarded-For is believed only from trusted proxies. The hub runs on a frozen TestClock, so
// neither the bucket nor a backoff moves unless the test advances it.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { TestClock } from '@opco-proxy/core/testing';
import { parseHubConfig } from '../src/index.js';
import { ADMIN_KEY, startTestHub } from './fixtures/hub-harness.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/** One request from a chosen loopback address (Linux answers on all of 127/8). */
function send(
  url: string,
  path: string,
  options: { from?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: hostname,
      port,
      path,
      localAddress: options.from ?? '127.0.0.1',
      headers: options.headers,
      agent: false,
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, headers: res.headers, body: undefined });
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const bearer = (key: string, more: Record<string, string> = {}) => ({
  headers: { authorization: `Bearer ${key}`, ...more },
});

function upgrade(url: string, apiKey: string, from?: string): Promise<Answer> {
  return send(url, `/ws?apiKey=${apiKey}`, {
    from,
    headers: {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
    },
  });
}

t.test(
  '300 wrong admin keys from one address: 403 for the free failures, then 429 with Retry-After; the right key works at once from another address',
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const hub = await startTestHub({ clock });
    t.teardown(() => hub.close());
    const answers: Answer[] = [];
    for (let batch = 0; batch < 6; batch++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            send(hub.url, '/admin/keys', bearer(`wrong-key-${batch}-${i}-0123456789abcdef0123`)),
          ),
        )),
      );
    }
    const statuses = answers.map((a) => a.status);
    t.equal(statuses.filter((s) => s === 403).length, 6, 'five free failures, and the sixth, which starts the backoff');
    t.equal(statuses.filter((s) => s === 429).length, 294, 'every other one refused before the key is even compared');
    const limited = answers.filter((a) => a.status === 429);
    t.ok(
      limited.every((a) => a.headers['retry-after'] === '1'),
      'Retry-After: the first backoff, 1 s',
    );
    t.ok(
      limited.every((a) => a.body?.status === 'error' && a.body?.code === 'RATE_LIMITED'),
      "the hub's error shape",
    );

    const elsewhere = await send(hub.url, '/admin/keys', { ...bearer(ADMIN_KEY), from: '127.0.0.2' });
    t.equal(elsewhere.status, 200, 'the right key from another address: at once');
    const here = await send(hub.url, '/admin/keys', bearer(ADMIN_KEY));
    t.equal(here.status, 429, 'from the guessing address even the right key waits out the backoff');

    const text = await (await fetch(`${hub.url}/metrics`)).text();
    t.match(text, /opco_proxy_hub_address_refusals_total\{reason="backoff"\} 295/);

    await clock.advance(1000);
    t.equal((await send(hub.url, '/admin/keys', bearer(ADMIN_KEY))).status, 200, 'once the backoff is over');
    t.equal(
      (await send(hub.url, '/admin/keys', bearer('wrong-again-0123456789abcdef0123456789'))).status,
      403,
      'the right key ended the series: a wrong one is a free failure again',
    );
  },
);

t.test(
  'a flood of unknown hub keys at the upgrade: 401 while the address has tokens, then a plain 429 with Retry-After, never a 101',
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const hub = await startTestHub({ clock, config: { addressRateLimit: { burst: 10, perSecond: 1 } } });
    t.teardown(() => hub.close());
    const { key } = await hub.key('pub');
    const answers: Answer[] = [];
    for (let i = 0; i < 40; i++) answers.push(await upgrade(hub.url, `hk_${String(i).padStart(64, '0')}`));
    t.same(
      answers.map((a) => a.status),
      [...Array<number>(10).fill(401), ...Array<number>(30).fill(429)],
      'the burst of 10, then refused',
    );
    t.match(answers.at(-1), { headers: { 'retry-after': '1' }, body: { status: 'error', code: 'RATE_LIMITED' } });
    t.equal((await upgrade(hub.url, '')).status, 429, 'a missing key counts as a failed one too');

    t.equal((await upgrade(hub.url, key)).status, 101, 'a valid key from the same address is not turned away');
    t.equal(
      (await upgrade(hub.url, `hk_${'f'.repeat(64)}`, '127.0.0.2')).status,
      401,
      'another address has its own tokens',
    );
    const text = await (await fetch(`${hub.url}/metrics`)).text();
    t.match(text, /opco_proxy_hub_address_refusals_total\{reason="failed-auth"\} 31/);
    await clock.advance(1000);
    t.equal(
      (await upgrade(hub.url, `hk_${'e'.repeat(64)}`)).status,
      401,
      'a token back after a second: the next wrong key is only refused',
    );
  },
);

t.test('X-Forwarded-For names the client only behind a trusted proxy', async (t) => {
  const clock = new TestClock({ frozen: true });
  const hub = await startTestHub({
    clock,
    config: { trustedProxies: ['127.0.0.1'], addressRateLimit: { freeFailures: 1 } },
  });
  t.teardown(() => hub.close());
  const via = (client: string, key: string, from?: string) =>
    send(hub.url, '/admin/keys', { ...bearer(key, { 'x-forwarded-for': client }), from });
  t.equal((await via('203.0.113.7', 'wrong-key-0123456789abcdef0123456789')).status, 403);
  t.equal(
    (await via('203.0.113.7', 'wrong-key-0123456789abcdef0123456789')).status,
    403,
    'the one beyond the free failure',
  );
  t.equal((await via('203.0.113.7', ADMIN_KEY)).status, 429, 'that client backs off');
  t.equal((await via('203.0.113.8', ADMIN_KEY)).status, 200, 'another client behind the same proxy does not');
  t.equal((await via('203.0.113.8', ADMIN_KEY, '127.0.0.2')).status, 200);
  t.equal(
    (await via('203.0.113.7', ADMIN_KEY, '127.0.0.2')).status,
    200,
    'an untrusted peer cannot borrow a client address: its own counts',
  );
  for (let i = 0; i < 2; i++) await via('203.0.113.9', 'wrong-key-0123456789abcdef0123456789', '127.0.0.3');
  t.equal(
    (await via('203.0.113.7', ADMIN_KEY, '127.0.0.3')).status,
    429,
    'nor shake off its own backoff by naming another',
  );
});

t.test('the config: addressRateLimit and trustedProxies checked key by key, core defaults', async (t) => {
  t.match(parseHubConfig({}), {
    addressRateLimit: { perSecond: 2, burst: 20, freeFailures: 5, maxBackoffS: 300 },
    trustedProxies: [],
  });
  t.match(parseHubConfig({ addressRateLimit: { burst: 5 }, trustedProxies: ['10.0.0.0/8', '::1'] }), {
    addressRateLimit: { perSecond: 2, burst: 5, freeFailures: 5, maxBackoffS: 300 },
    trustedProxies: ['10.0.0.0/8', '::1'],
  });
  t.throws(
    () => parseHubConfig({ addressRateLimit: { perSecond: 0 } }),
    /addressRateLimit\.perSecond: Must be greater than 0/,
  );
  t.throws(() => parseHubConfig({ addressRateLimit: { burst: 1.5 } }), /addressRateLimit\.burst: Expected integer/);
  t.throws(() => parseHubConfig({ addressRateLimit: { freeFailures: 0 } }), /addressRateLimit\.freeFailures/);
  t.throws(
    () => parseHubConfig({ addressRateLimit: { maxBackoff: 3 } }),
    /addressRateLimit\.maxBackoff: Unrecognized field/,
  );
  t.throws(() => parseHubConfig({ trustedProxies: '10.0.0.1' }), /trustedProxies: Expected array/);
  t.throws(
    () => parseHubConfig({ trustedProxies: ['10.0.0.1', 'proxy.internal'] }),
    /trustedProxies\.1: Invalid format/,
  );
  t.throws(
    () => parseHubConfig({ trustedProxies: ['10.0.0.0/33'] }),
    /trustedProxies\.0: "10\.0\.0\.0\/33" has an invalid prefix length/,
  );
});
