/**
 * Per-address limits of the public edge (issue 27, docs/decisions.md P13). The service cannot
 * tell a real CFA key from an invented one (only the upstream knows), so what a stranger can do
 * is bounded by where it comes from:
 *
 * - one token bucket per client address, taken by each request of an unproven tenant and by each
 *   failed authentication of any kind (a refused or malformed tenant key, a wrong operator key, a
 *   wrong hub key); an empty bucket answers 429 with Retry-After;
 * - wrong operator keys back off per address: after `freeFailures` in a row, each further one
 *   shuts the address out for twice as long as the last (up to `maxBackoffS`), so guessing the
 *   key takes forever while the right key works at once from any other address.
 *
 * IPv6 clients are keyed by their /64: one host gets a whole /64, so counting single addresses
 * would let it take a fresh bucket per request.
 */
import ipaddr from 'ipaddr.js';
import { createError } from '../errors/errors.js';
import { RequestRate } from './request-rate.js';
import type { Clock } from '../clock.js';

export interface AddressLimitOptions {
  perSecond: number;
  burst: number;
  /** Wrong operator keys an address may send in a row before backing off. */
  freeFailures: number;
  /** The longest an address is shut out after wrong operator keys. */
  maxBackoffS: number;
}

/** Why an address was refused, for the metric `opco_proxy_address_refusals_total`. */
export type AddressRefusal = 'unproven' | 'failed-auth' | 'backoff';

interface Failures {
  count: number;
  blockedUntil: number;
  lastAt: number;
}

/** Addresses backing off that are remembered at most; the oldest are forgotten first. */
const MAX_BACKOFF_ADDRESSES = 10_000;

export function addressKey(address: string): string {
  if (!ipaddr.IPv6.isValid(address)) return address;
  const groups = ipaddr.IPv6.parse(address)
    .parts.slice(0, 4)
    .map((part) => part.toString(16));
  return `${groups.join(':')}::/64`;
}

export class AddressLimits {
  private readonly bucket: RequestRate;
  private readonly failures = new Map<string, Failures>();

  constructor(
    private readonly options: AddressLimitOptions,
    private readonly clock: Clock,
    private readonly refused: (reason: AddressRefusal) => void = () => undefined,
  ) {
    this.bucket = new RequestRate(
      options,
      clock,
      'requests of unproven API keys and failed authentications from this address',
    );
  }

  /** A request of a tenant the upstream has not accepted yet: one token of its address, or 429. */
  takeUnproven(address: string): void {
    this.guard('unproven', () => this.bucket.take(addressKey(address)));
  }

  /** Before an authentication that may fail: 429 while the address has no token left. */
  checkBeforeAuth(address: string): void {
    this.guard('failed-auth', () => this.bucket.check(addressKey(address)));
  }

  /** An authentication failed (the request is refused anyway): one token of its address. */
  failedAuth(address: string): void {
    this.bucket.spend(addressKey(address));
  }

  /** Before comparing an operator (or hub admin) key: 429 while the address backs off. */
  checkBackoff(address: string): void {
    const entry = this.failures.get(addressKey(address));
    const now = this.clock.now();
    if (!entry || entry.blockedUntil <= now) return;
    this.refused('backoff');
    throw createError('RATE_LIMITED', 'too many wrong keys from this address; wait before trying again', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil((entry.blockedUntil - now) / 1000))) },
    });
  }

  /** A wrong operator key: counted toward the address's backoff, and as a failed authentication. */
  operatorFailed(address: string): void {
    this.failedAuth(address);
    const key = addressKey(address);
    const now = this.clock.now();
    const entry = this.failures.get(key) ?? { count: 0, blockedUntil: 0, lastAt: now };
    // A failure long after the last one starts a new series: a typo a day is no attack.
    if (now - entry.lastAt > this.options.maxBackoffS * 2000) entry.count = 0;
    entry.count += 1;
    entry.lastAt = now;
    const over = entry.count - this.options.freeFailures;
    if (over > 0)
      entry.blockedUntil = now + Math.min(this.options.maxBackoffS * 1000, 1000 * 2 ** Math.min(over - 1, 30));
    this.failures.delete(key);
    this.failures.set(key, entry);
    if (this.failures.size > MAX_BACKOFF_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
  }

  /** The right operator key: the address's series of failures is over. */
  operatorSucceeded(address: string): void {
    if (this.failures.size > 0) this.failures.delete(addressKey(address));
  }

  private guard(reason: AddressRefusal, check: () => void): void {
    try {
      check();
    } catch (err) {
      this.refused(reason);
      throw err;
    }
  }
}
