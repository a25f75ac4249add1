/**
 * A tenant's own request rate (D6): a token bucket per tenant hash, per instance.
 * Buckets idle long enough to be full again are dropped, so memory follows active tenants.
 */
import { createError } from './errors.js';
import type { Clock } from './clock.js';

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
  ) {
    this.lastSweep = clock.now();
  }

  /** Takes one token for the tenant or throws RATE_LIMITED with Retry-After. */
  take(tenant: string, now = this.clock.now()): void {
    const { perSecond, burst } = this.options;
    this.sweep(now);
    const bucket = this.buckets.get(tenant) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    this.buckets.set(tenant, bucket);
    if (bucket.tokens < 1) {
      const waitS = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      throw createError('RATE_LIMITED', `request rate of this API key exceeds ${perSecond}/s`, { headers: { 'Retry-After': String(waitS) } });
    }
    bucket.tokens -= 1;
  }

  private sweep(now: number): void {
    const fullAfterMs = (this.options.burst / this.options.perSecond) * 1000;
    if (now - this.lastSweep < fullAfterMs) return;
    this.lastSweep = now;
    for (const [tenant, bucket] of this.buckets) {
      if (now - bucket.updatedAt >= fullAfterMs) this.buckets.delete(tenant);
    }
  }
}
