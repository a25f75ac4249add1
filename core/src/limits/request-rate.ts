/**
 * Token buckets keyed by a string: a tenant's own request rate (D6, keyed by tenant hash) and
 * the per-address limits of the public edge (http/address-limits.ts, keyed by client address).
 * Buckets idle long enough to be full again are dropped, so memory follows active keys.
 */
import { createError } from '../errors/errors.js';
import type { Clock } from '../clock.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export interface RequestRateOptions {
  perSecond: number;
  burst: number;
}

export class RequestRate {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep: number;

  constructor(
    private readonly options: RequestRateOptions,
    private readonly clock: Clock,
    /** What a refusal says was exceeded. */
    private readonly what = 'request rate of this API key',
  ) {
    this.lastSweep = clock.now();
  }

  /** Takes one token for the key or throws RATE_LIMITED with Retry-After. */
  take(key: string, now = this.clock.now()): void {
    const bucket = this.refill(key, now);
    if (bucket.tokens < 1) throw this.refusal(bucket);
    bucket.tokens -= 1;
  }

  /** Takes one token when one is left; never refuses (the request is refused already). */
  spend(key: string, now = this.clock.now()): void {
    const bucket = this.refill(key, now);
    if (bucket.tokens >= 1) bucket.tokens -= 1;
  }

  /** Throws RATE_LIMITED when the key has no token left, taking none. */
  check(key: string, now = this.clock.now()): void {
    const bucket = this.buckets.get(key);
    if (!bucket) return;
    const filled = this.refill(key, now);
    if (filled.tokens < 1) throw this.refusal(filled);
  }

  private refill(key: string, now: number): Bucket {
    const { perSecond, burst } = this.options;
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    return bucket;
  }

  private refusal(bucket: Bucket): Error {
    const { perSecond } = this.options;
    const waitS = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
    return createError('RATE_LIMITED', `${this.what} exceeds ${perSecond}/s`, {
      headers: { 'Retry-After': String(waitS) },
    });
  }

  private sweep(now: number): void {
    const fullAfterMs = (this.options.burst / this.options.perSecond) * 1000;
    if (now - this.lastSweep < fullAfterMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt >= fullAfterMs) this.buckets.delete(key);
    }
  }
}
