import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import t from 'tap';
import type * as Tap from 'tap';
import {
  assertCallbackTarget,
  CallbackUrlError,
  checkCallbackUrl,
  forbiddenAddressReason,
  guardedLookup,
  type Mode,
} from '../src/ssrf.js';
import { systemClock, type HostResolver, type ResolvedAddress } from '@opco-proxy/core';
import { postNotification } from '../src/notification-post.js';

type Test = Tap.Test;

function expectRejected(t: Test, run: () => unknown, why: RegExp): void {
  try {
    run();
  } catch (err) {
    t.type(err, CallbackUrlError);
    t.equal((err as CallbackUrlError).code, 'ESSRF');
    t.match((err as Error).message, /^callbackUrl: /);
    t.match((err as Error).message, why);
    return;
  }
  t.fail('was accepted');
}

async function expectRejectedAsync(t: Test, run: () => Promise<unknown>, why: RegExp): Promise<void> {
  try {
    await run();
  } catch (err) {
    t.type(err, CallbackUrlError);
    t.equal((err as CallbackUrlError).code, 'ESSRF');
    t.match((err as Error).message, why);
    return;
  }
  t.fail('was accepted');
}

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A resolver answering from a table, counting its calls; unknown names fail like getaddrinfo. */
function tableResolver(table: Record<string, ResolvedAddress[]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (answer) return answer;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };
  return Object.assign(resolver, { calls });
}

t.test('WHATWG URL rewrites every numeric IPv4 spelling to dotted decimal for https', async (t) => {
  const spellings: Array<[string, string]> = [
    ['https://2130706433/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://0x7f.0.0.1/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://127\u30020\u30020\u30021/', '127.0.0.1'],
    ['https://167772161/', '10.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ];
  for (const [raw, hostname] of spellings) t.equal(new URL(raw).hostname, hostname, raw);
});

t.test('production: rejected targets, each for its reason', async (t) => {
  const rejected: Array<[string, RegExp]> = [
    // scheme and credentials
    ['http://example.com/hook', /https is required/],
    ['ftp://example.com/hook', /https is required/],
    ['https://user:secret@example.com/hook', /credentials/],
    ['https://user@example.com/hook', /credentials/],
    ['https://:secret@example.com/hook', /credentials/],
    ['not a url', /not a valid absolute URL/],
    ['/relative/path', /not a valid absolute URL/],
    // loopback names and addresses
    ['https://localhost/hook', /host localhost is a loopback name/],
    ['https://LOCALHOST./hook', /host localhost\. is a loopback name/],
    ['https://api.localhost/hook', /host api\.localhost is a loopback name/],
    ['https://127.0.0.1/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://127.8.9.10/hook', /target 127\.8\.9\.10 is a loopback address/],
    ['https://[::1]/hook', /target ::1 is a loopback address/],
    // IPv4 embedded in IPv6
    ['https://[::ffff:127.0.0.1]/hook', /IPv4-mapped address of 127\.0\.0\.1, a loopback address/],
    ['https://[::ffff:7f00:1]/hook', /IPv4-mapped address of 127\.0\.0\.1, a loopback address/],
    ['https://[::ffff:10.0.0.1]/hook', /IPv4-mapped address of 10\.0\.0\.1, a private address/],
    ['https://[::ffff:169.254.169.254]/hook', /IPv4-mapped address of 169\.254\.169\.254, a link-local/],
    ['https://[::127.0.0.1]/hook', /IPv4-compatible address/],
    ['https://[64:ff9b::10.0.0.1]/hook', /NAT64 address of 10\.0\.0\.1, a private address/],
    ['https://[64:ff9b:1::a00:1]/hook', /local-use NAT64/],
    ['https://[2002:7f00:1::]/hook', /6to4/],
    ['https://[2001::5efe:7f00:1]/hook', /Teredo/],
    ['https://[::ffff:0:7f00:1]/hook', /IPv4-translated/],
    // numeric IPv4 spellings (normalized by URL, then judged as addresses)
    ['https://2130706433/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://0177.0.0.1/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://0x7f.0.0.1/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://0x7f000001/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://127.1/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://%31%32%37.0.0.1/hook', /target 127\.0\.0\.1 is a loopback address/],
    ['https://167772161/hook', /target 10\.0\.0\.1 is a private address/],
    ['https://0xa9.0xfe.0xa9.0xfe/hook', /target 169\.254\.169\.254 is a link-local/],
    // RFC 1918
    ['https://10.0.0.1/hook', /target 10\.0\.0\.1 is a private address/],
    ['https://10.255.255.255/hook', /private address/],
    ['https://192.168.1.10/hook', /target 192\.168\.1\.10 is a private address/],
    ['https://172.16.0.1/hook', /target 172\.16\.0\.1 is a private address/],
    ['https://172.20.5.5/hook', /private address/],
    ['https://172.31.255.254/hook', /target 172\.31\.255\.254 is a private address/],
    // private-network names
    ['https://printer.local/hook', /host printer\.local ends in \.local/],
    ['https://Printer.LOCAL./hook', /ends in \.local/],
    ['https://metadata.google.internal/hook', /host metadata\.google\.internal ends in \.internal/],
    ['https://db.corp.INTERNAL/hook', /ends in \.internal/],
    ['https://intranet/hook', /host intranet is a single-label name/],
    // link-local, unique-local, CGNAT, unspecified
    ['https://169.254.169.254/latest/meta-data/', /target 169\.254\.169\.254 is a link-local address/],
    ['https://[fe80::1]/hook', /target fe80::1 is a link-local address/],
    ['https://[fc00::1]/hook', /target fc00::1 is a unique-local address/],
    ['https://[fd12::1]/hook', /target fd12::1 is a unique-local address/],
    ['https://100.64.0.1/hook', /target 100\.64\.0\.1 is a carrier-grade NAT address/],
    ['https://100.127.255.254/hook', /carrier-grade NAT/],
    ['https://0.0.0.0/hook', /target 0\.0\.0\.0 is an unspecified address/],
    ['https://0/hook', /target 0\.0\.0\.0 is an unspecified address/],
    ['https://[::]/hook', /target :: is an unspecified address/],
    // multicast, broadcast, reserved, documentation, benchmark
    ['https://224.0.0.1/hook', /multicast/],
    ['https://[ff02::1]/hook', /multicast/],
    ['https://255.255.255.255/hook', /broadcast/],
    ['https://192.0.2.1/hook', /reserved, documentation or benchmark/],
    ['https://198.51.100.7/hook', /reserved, documentation or benchmark/],
    ['https://198.18.0.1/hook', /reserved, documentation or benchmark/],
    ['https://240.0.0.1/hook', /reserved, documentation or benchmark/],
    ['https://[2001:db8::1]/hook', /reserved, documentation or benchmark/],
    ['https://[fec0::1]/hook', /site-local/],
    ['https://[100::1]/hook', /special-purpose address \(discard\)/],
  ];
  for (const [raw, why] of rejected) {
    t.test(raw, async (t) => expectRejected(t, () => checkCallbackUrl(raw, 'production'), why));
  }
});

t.test('production: accepted targets', async (t) => {
  const accepted: Array<[string, string]> = [
    ['https://example.com/hook', 'example.com'],
    ['https://93.184.216.34/x', '93.184.216.34'],
    ['https://[2606:4700:4700::1111]/', '[2606:4700:4700::1111]'],
    ['https://172.15.255.255/hook', '172.15.255.255'],
    ['https://172.32.0.1/hook', '172.32.0.1'],
    ['https://100.128.0.1/hook', '100.128.0.1'],
    ['https://11.0.0.1/hook', '11.0.0.1'],
    ['https://[::ffff:93.184.216.34]/hook', '[::ffff:5db8:d822]'],
    ['https://[64:ff9b::93.184.216.34]/hook', '[64:ff9b::5db8:d822]'],
    ['https://hooks.example.com:8443/path?q=1', 'hooks.example.com'],
    ['https://example.com./hook', 'example.com.'],
    ['https://local.example.com/hook', 'local.example.com'],
    ['https://internal.example.com/hook', 'internal.example.com'],
    ['https://my-internal.example/hook', 'my-internal.example'],
  ];
  for (const [raw, hostname] of accepted) {
    t.test(raw, async (t) => {
      const url = checkCallbackUrl(raw, 'production');
      t.type(url, URL);
      t.equal(url.hostname, hostname);
    });
  }
});

t.test('development: http and loopback allowed, everything else still refused', async (t) => {
  const accepted = [
    'http://127.0.0.1:3000/hook',
    'http://localhost/',
    'https://localhost/',
    'http://LOCALHOST.:8080/',
    'http://app.localhost/',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://2130706433/hook',
    'http://example.com/hook',
  ];
  for (const raw of accepted) t.doesNotThrow(() => checkCallbackUrl(raw, 'development'), raw);

  const rejected: Array<[string, RegExp]> = [
    ['http://10.0.0.1/hook', /target 10\.0\.0\.1 is a private address/],
    ['https://10.0.0.1/hook', /private address/],
    ['http://192.168.0.1/hook', /private address/],
    ['http://172.16.0.1/hook', /private address/],
    ['http://169.254.169.254/', /link-local/],
    ['http://[fd00::1]/', /unique-local/],
    ['http://0.0.0.0:3000/', /unspecified/],
    ['http://printer.local/', /\.local/],
    ['http://db.internal/', /\.internal/],
    ['http://user:pw@localhost/', /credentials/],
    ['ftp://localhost/', /http or https is required/],
  ];
  for (const [raw, why] of rejected) {
    t.test(raw, async (t) => expectRejected(t, () => checkCallbackUrl(raw, 'development'), why));
  }
});

t.test('forbiddenAddressReason on raw resolver answers', async (t) => {
  const cases: Array<[string, Mode, RegExp | null]> = [
    ['93.184.216.34', 'production', null],
    ['2606:4700:4700::1111', 'production', null],
    ['127.0.0.1', 'production', /loopback/],
    ['127.0.0.1', 'development', null],
    ['::1', 'development', null],
    ['::ffff:127.0.0.1', 'development', null],
    ['::ffff:127.0.0.1', 'production', /IPv4-mapped address of 127\.0\.0\.1, a loopback/],
    ['10.0.0.1', 'development', /private/],
    ['fe80::1%eth0', 'production', /link-local/],
    ['[fd00::1]', 'production', /unique-local/],
    ['::7f00:1', 'production', /IPv4-compatible/],
    ['3000::1', 'production', null],
    ['4000::1', 'production', /outside 2000::\/3/],
    ['example.com', 'production', /not an IP address/],
    ['', 'production', /not an IP address/],
  ];
  for (const [address, mode, why] of cases) {
    const reason = forbiddenAddressReason(address, mode);
    if (why === null) t.equal(reason, null, `${address} (${mode}) allowed`);
    else t.match(reason, why, `${address} (${mode}) refused`);
  }
});

t.test('assertCallbackTarget with an injected resolver', async (t) => {
  const resolver = tableResolver({
    'public.example': [v4('93.184.216.34'), v6('2606:4700:4700::1111')],
    'private.example': [v4('10.0.0.5')],
    'mixed.example': [v4('93.184.216.34'), v4('192.168.0.10')],
    'mixed6.example': [v6('2606:4700:4700::1111'), v6('fd00::1')],
    'mapped.example': [v6('::ffff:127.0.0.1')],
    'metadata.example': [v4('169.254.169.254')],
    'empty.example': [],
    'dev.example': [v4('10.0.0.1')],
    'loop.example': [v4('127.0.0.1'), v6('::1')],
    localhost: [v6('::1'), v4('127.0.0.1')],
  });

  t.test('a public name passes and its URL is returned', async (t) => {
    const url = await assertCallbackTarget('https://public.example/hook', 'production', resolver);
    t.equal(url.href, 'https://public.example/hook');
  });

  const rejected: Array<[string, Mode, RegExp]> = [
    ['https://private.example/hook', 'production', /host private\.example resolves to 10\.0\.0\.5, a private address/],
    ['https://mixed.example/hook', 'production', /resolves to 192\.168\.0\.10, a private address/],
    ['https://mixed6.example/hook', 'production', /resolves to fd00::1, a unique-local address/],
    [
      'https://mapped.example/hook',
      'production',
      /resolves to ::ffff:127\.0\.0\.1, an IPv4-mapped address of 127\.0\.0\.1/,
    ],
    ['https://metadata.example/hook', 'production', /resolves to 169\.254\.169\.254, a link-local/],
    ['https://loop.example/hook', 'production', /resolves to 127\.0\.0\.1, a loopback address/],
    ['https://nowhere.example/hook', 'production', /host nowhere\.example does not resolve \(ENOTFOUND\)/],
    ['https://empty.example/hook', 'production', /host empty\.example does not resolve/],
    ['http://dev.example/hook', 'development', /resolves to 10\.0\.0\.1, a private address/],
  ];
  for (const [raw, mode, why] of rejected) {
    t.test(`${raw} (${mode})`, async (t) =>
      expectRejectedAsync(t, () => assertCallbackTarget(raw, mode, resolver), why),
    );
  }

  t.test('development accepts names resolving only to loopback', async (t) => {
    await t.resolves(assertCallbackTarget('http://localhost:3000/hook', 'development', resolver));
    await t.resolves(assertCallbackTarget('http://loop.example:3000/hook', 'development', resolver));
  });

  t.test('static refusals and IP literals never reach the resolver', async (t) => {
    const counting = tableResolver({ 'public.example': [v4('93.184.216.34')] });
    await expectRejectedAsync(
      t,
      () => assertCallbackTarget('http://public.example/', 'production', counting),
      /https is required/,
    );
    await expectRejectedAsync(
      t,
      () => assertCallbackTarget('https://localhost/', 'production', counting),
      /loopback name/,
    );
    await expectRejectedAsync(
      t,
      () => assertCallbackTarget('https://10.1.2.3/', 'production', counting),
      /target 10\.1\.2\.3 is a private address/,
    );
    await t.resolves(assertCallbackTarget('https://93.184.216.34/x', 'production', counting));
    await t.resolves(assertCallbackTarget('https://[2606:4700:4700::1111]/', 'production', counting));
    t.same(counting.calls, []);
  });
});

t.test('assertCallbackTarget with the default resolver uses the system lookup', async (t) => {
  // localhost comes from /etc/hosts, so this needs no network.
  await t.resolves(assertCallbackTarget('http://localhost:3000/hook', 'development'));
});

t.test('guardedLookup speaks node lookup', async (t) => {
  const resolver = tableResolver({
    'dual.example': [v6('2606:4700:4700::1111'), v4('93.184.216.34')],
    'v4only.example': [v4('93.184.216.34')],
    'bad.example': [v4('93.184.216.34'), v4('10.0.0.1')],
    'lying.example': [{ address: '93.184.216.34', family: 6 }],
    'loop.example': [v4('127.0.0.1')],
  });
  type Answer = { err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };
  const ask = (mode: Mode, hostname: string, options: Parameters<ReturnType<typeof guardedLookup>>[1]) =>
    new Promise<Answer>((resolve) =>
      guardedLookup(mode, resolver)(hostname, options, (err, address, family) => resolve({ err, address, family })),
    );

  t.test('all: every checked address, in resolver order', async (t) => {
    const { err, address } = await ask('production', 'dual.example', { all: true });
    t.equal(err, null);
    t.same(address, [
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '93.184.216.34', family: 4 },
    ]);
  });

  t.test('single: the first address and its family', async (t) => {
    const { err, address, family } = await ask('production', 'dual.example', {});
    t.equal(err, null);
    t.equal(address, '2606:4700:4700::1111');
    t.equal(family, 6);
  });

  t.test('family filters what is handed over', async (t) => {
    const four = await ask('production', 'dual.example', { family: 4 });
    t.equal(four.address, '93.184.216.34');
    t.equal(four.family, 4);
    const none = await ask('production', 'v4only.example', { family: 6, all: true });
    t.equal(none.err?.code, 'ENOTFOUND');
  });

  t.test('the family comes from the address, not the resolver', async (t) => {
    const { address, family } = await ask('production', 'lying.example', {});
    t.equal(address, '93.184.216.34');
    t.equal(family, 4);
  });

  t.test('one forbidden address refuses the whole answer with ESSRF', async (t) => {
    const { err, address } = await ask('production', 'bad.example', { all: true });
    t.type(err, CallbackUrlError);
    t.equal(err?.code, 'ESSRF');
    t.match(err?.message, /bad\.example resolves to 10\.0\.0\.1, a private address/);
    t.same(address, []);
  });

  t.test('forbidden names are refused before resolving', async (t) => {
    const before = resolver.calls.length;
    const { err } = await ask('production', 'metadata.google.internal', {});
    t.equal(err?.code, 'ESSRF');
    t.equal(resolver.calls.length, before);
  });

  t.test('IP literals are judged directly', async (t) => {
    const { err } = await ask('production', '127.0.0.1', {});
    t.equal(err?.code, 'ESSRF');
    const ok = await ask('production', '93.184.216.34', { all: true });
    t.same(ok.address, [{ address: '93.184.216.34', family: 4 }]);
  });

  t.test('resolver failures pass through with their own code', async (t) => {
    const { err } = await ask('production', 'nowhere.example', {});
    t.equal(err?.code, 'ENOTFOUND');
  });

  t.test('development hands over loopback', async (t) => {
    const { err, address } = await ask('development', 'loop.example', {});
    t.equal(err, null);
    t.equal(address, '127.0.0.1');
  });

  t.test('the two-argument form (no options) works', async (t) => {
    const lookup = guardedLookup('production', resolver) as unknown as (
      host: string,
      cb: (err: NodeJS.ErrnoException | null, address: string) => void,
    ) => void;
    const address = await new Promise((resolve) => lookup('v4only.example', (_err, a) => resolve(a)));
    t.equal(address, '93.184.216.34');
  });
});

t.test('DNS rebinding against a real receiver', async (t) => {
  const received: Array<{ host: string | undefined }> = [];
  const receiver = http.createServer((req, res) => {
    received.push({ host: req.headers.host });
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const port = (receiver.address() as AddressInfo).port;
  // A fresh agent per request: node's global agent keeps sockets alive, and a reused socket
  // never asks the lookup again, which would let one case leak into the next.
  // The delivery's own exchange (notification-post.ts), as an attempt makes it.
  const post = async (
    url: string,
    lookup: ReturnType<typeof guardedLookup>,
    agent = new http.Agent({ keepAlive: false }),
  ) => ({
    statusCode: await postNotification(
      new URL(url),
      '{}',
      { 'content-type': 'application/json' },
      { agents: { http: agent, https: new https.Agent() }, clock: systemClock, lookup, timeoutMs: 5000 },
    ),
  });

  t.test('a name that was public at registration and loopback at delivery is never connected to', async (t) => {
    received.length = 0;
    let calls = 0;
    const rebinding: HostResolver = async (hostname) => {
      t.equal(hostname, 'rebind.example');
      calls += 1;
      return calls === 1 ? [v4('93.184.216.34')] : [v4('127.0.0.1')];
    };

    await t.resolves(assertCallbackTarget(`https://rebind.example:${port}/`, 'production', rebinding));
    t.equal(calls, 1);

    await t.rejects(post(`http://rebind.example:${port}/`, guardedLookup('production', rebinding)), {
      code: 'ESSRF',
      message: /resolves to 127\.0\.0\.1, a loopback address/,
    });
    t.equal(calls, 2, 'the connection asked the guarded lookup');
    t.equal(received.length, 0, 'the receiver got no request');
  });

  t.test('the guarded lookup is what the connection uses (development reaches loopback)', async (t) => {
    received.length = 0;
    let calls = 0;
    const loopback: HostResolver = async () => {
      calls += 1;
      return [v4('127.0.0.1')];
    };
    const response = await post(`http://rebind.example:${port}/`, guardedLookup('development', loopback));
    t.equal(response.statusCode, 200);
    t.equal(calls, 1);
    t.same(
      received,
      [{ host: `rebind.example:${port}` }],
      'reached through the looked-up address under the original name',
    );
  });

  t.test('the default resolver also drives the connection', async (t) => {
    received.length = 0;
    const response = await post(`http://localhost:${port}/`, guardedLookup('development'));
    t.equal(response.statusCode, 200);
    t.equal(received.length, 1);
    await t.rejects(post(`http://localhost:${port}/`, guardedLookup('production')), { code: 'ESSRF' });
    t.equal(received.length, 1);
  });

  t.test('a pooled keep-alive socket is reused without a lookup, so delivery needs its own agent', async (t) => {
    received.length = 0;
    const shared = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => shared.destroy());
    let calls = 0;
    const loopback: HostResolver = async () => {
      calls += 1;
      return [v4('127.0.0.1')];
    };
    await post(`http://pooled.example:${port}/`, guardedLookup('development', loopback), shared);
    const reused = await post(`http://pooled.example:${port}/`, guardedLookup('production', loopback), shared);
    t.equal(reused.statusCode, 200);
    t.equal(calls, 1, 'the second request never looked the name up');
    t.equal(received.length, 2);
  });

  t.test('node skips the lookup for IP literals, so delivery must also run checkCallbackUrl', async (t) => {
    received.length = 0;
    const response = await post(`http://127.0.0.1:${port}/`, guardedLookup('production', tableResolver({})));
    t.equal(response.statusCode, 200);
    t.equal(received.length, 1, 'a literal target bypasses dnsLookup entirely');
    expectRejected(t, () => checkCallbackUrl(`https://127.0.0.1:${port}/`, 'production'), /loopback address/);
  });
});
