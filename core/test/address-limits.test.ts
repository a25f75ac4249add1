// Issue 27: per-address limits of the public edge, and the client address behind trusted proxies.
import t from 'tap';
import type { IncomingMessage } from 'node:http';
import { AddressLimits, TrustedProxies, addressKey, TestClock, type AddressRefusal } from '../src/application.js';

const options = { perSecond: 2, burst: 5, freeFailures: 3, maxBackoffS: 300 };

t.test('unproven requests take tokens of their address; other addresses are untouched', async (t) => {
  const clock = new TestClock({ frozen: true });
  const refused: AddressRefusal[] = [];
  const limits = new AddressLimits(options, clock, (reason) => refused.push(reason));
  for (let i = 0; i < 5; i++) limits.takeUnproven('203.0.113.9');
  const err = (() => {
    try {
      limits.takeUnproven('203.0.113.9');
    } catch (e) {
      return e as { code: string; headers: Record<string, string> };
    }
  })();
  t.match(err, { code: 'RATE_LIMITED', headers: { 'Retry-After': '1' } });
  t.same(refused, ['unproven']);
  t.doesNotThrow(() => limits.takeUnproven('203.0.113.10'), 'another address has its own bucket');
  await clock.advance(500);
  t.doesNotThrow(() => limits.takeUnproven('203.0.113.9'), 'a token back after 1/perSecond');
});

t.test(
  'failed authentications spend tokens, and an address out of tokens is refused before its key is checked',
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const limits = new AddressLimits(options, clock);
    for (let i = 0; i < 5; i++) {
      limits.checkBeforeAuth('198.51.100.1');
      limits.failedAuth('198.51.100.1');
    }
    t.throws(() => limits.checkBeforeAuth('198.51.100.1'), { code: 'RATE_LIMITED' });
    t.throws(() => limits.takeUnproven('198.51.100.1'), { code: 'RATE_LIMITED' }, 'one bucket for both');
  },
);

t.test('wrong operator keys back off per address, doubling; the right key from elsewhere works at once', async (t) => {
  const clock = new TestClock({ frozen: true });
  const limits = new AddressLimits(options, clock);
  const attacker = '192.0.2.66';
  const retryAfter = () => {
    try {
      limits.checkBackoff(attacker);
      return 0;
    } catch (e) {
      return Number((e as { headers: Record<string, string> }).headers['Retry-After']);
    }
  };
  for (let i = 0; i < 3; i++) limits.operatorFailed(attacker);
  t.equal(retryAfter(), 0, 'the free failures');
  limits.operatorFailed(attacker);
  t.equal(retryAfter(), 1);
  await clock.advance(1000);
  limits.operatorFailed(attacker);
  t.equal(retryAfter(), 2, 'twice as long');
  for (let i = 0; i < 20; i++) {
    await clock.advance(600_000);
    limits.operatorFailed(attacker);
  }
  t.equal(retryAfter(), 300, 'never more than maxBackoffS');
  t.doesNotThrow(() => limits.checkBackoff('192.0.2.1'), 'the operator elsewhere');
  limits.operatorSucceeded(attacker);
  t.equal(retryAfter(), 0, 'the right key ends the series');
});

t.test('IPv6 clients are limited per /64', async (t) => {
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8:1:2:ffff:1:2:3'), '2001:db8:1:2::/64');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('203.0.113.9'), '203.0.113.9');
});

function request(remoteAddress: string, forwarded?: string): IncomingMessage {
  return {
    socket: { remoteAddress },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  } as unknown as IncomingMessage;
}

t.test(
  'the client address: the socket, or X-Forwarded-For read from the right behind trusted proxies only',
  async (t) => {
    const none = new TrustedProxies([]);
    t.equal(none.clientOf(request('203.0.113.5', '1.2.3.4')), '203.0.113.5', 'no trusted proxy: the header is ignored');
    t.equal(none.clientOf(request('::ffff:203.0.113.5')), '203.0.113.5', 'IPv4-mapped IPv6 as IPv4');
    const proxies = new TrustedProxies(['10.0.0.0/8', '2001:db8::/32']);
    t.equal(proxies.clientOf(request('10.1.2.3', '198.51.100.7')), '198.51.100.7');
    t.equal(
      proxies.clientOf(request('10.1.2.3', '6.6.6.6, 198.51.100.7, 10.9.9.9')),
      '198.51.100.7',
      'what the client wrote itself is left of its first proxy',
    );
    t.equal(
      proxies.clientOf(request('203.0.113.5', '198.51.100.7')),
      '203.0.113.5',
      'an untrusted peer cannot forward',
    );
    t.equal(proxies.clientOf(request('10.1.2.3', 'garbage, 10.2.2.2')), '10.2.2.2', 'the last address vouched for');
    t.equal(proxies.clientOf(request('10.1.2.3')), '10.1.2.3', 'a trusted proxy without the header is the client');
    t.throws(() => new TrustedProxies(['10.0.0.0/33']), /prefix/);
    t.throws(() => new TrustedProxies(['not-an-ip']), /not an address/);
  },
);
