/**
 * Pipeline step 9: per-opco figures over a sliding 60-second window (SPEC 1.1, 8), read by
 * GET /{opcoId}/status (D13) and by the hub; plus Prometheus counters for operators at /metrics.
 */
import { Counter, Histogram, Registry } from 'prom-client';

interface Bucket {
  start: number;
  requests: number;
  errors: number;
  rateLimited: number;
  latencyMs: number;
  warnings: number;
}

export interface WindowSnapshot {
  requests: number;
  errors: number;
  rateLimited: number;
  warnings: number;
  errorRate: number;
  averageLatencyMs: number;
}

export interface CallOutcome {
  route: string;
  latencyMs: number;
  /** HTTP status given to the caller (or the upstream's), 0 for network failures. */
  status: number;
  error: boolean;
  warnings: number;
}

/** Per-second buckets in a ring: memory stays fixed however many calls are made. */
export class MetricsWindow {
  private readonly buckets = new Map<string, Bucket[]>();
  constructor(private readonly windowMs = 60_000, private readonly bucketMs = 1_000) {}

  record(opcoId: string, outcome: CallOutcome, now = Date.now()): void {
    const bucket = this.bucketAt(opcoId, now);
    bucket.requests += 1;
    bucket.latencyMs += outcome.latencyMs;
    bucket.warnings += outcome.warnings;
    if (outcome.error) bucket.errors += 1;
    if (outcome.status === 429) bucket.rateLimited += 1;
  }

  snapshot(opcoId: string, now = Date.now()): WindowSnapshot {
    const total: WindowSnapshot = { requests: 0, errors: 0, rateLimited: 0, warnings: 0, errorRate: 0, averageLatencyMs: 0 };
    let latency = 0;
    for (const bucket of this.buckets.get(opcoId) ?? []) {
      if (bucket.start <= now - this.windowMs) continue;
      total.requests += bucket.requests;
      total.errors += bucket.errors;
      total.rateLimited += bucket.rateLimited;
      total.warnings += bucket.warnings;
      latency += bucket.latencyMs;
    }
    if (total.requests > 0) {
      total.errorRate = total.errors / total.requests;
      total.averageLatencyMs = latency / total.requests;
    }
    return total;
  }

  private bucketAt(opcoId: string, now: number): Bucket {
    const size = Math.ceil(this.windowMs / this.bucketMs);
    let ring = this.buckets.get(opcoId);
    if (!ring) {
      ring = Array.from({ length: size }, () => emptyBucket(-Infinity));
      this.buckets.set(opcoId, ring);
    }
    const start = Math.floor(now / this.bucketMs) * this.bucketMs;
    const index = Math.floor(now / this.bucketMs) % size;
    if (ring[index].start !== start) ring[index] = emptyBucket(start);
    return ring[index];
  }
}

function emptyBucket(start: number): Bucket {
  return { start, requests: 0, errors: 0, rateLimited: 0, latencyMs: 0, warnings: 0 };
}

/** One registry per kernel, so several kernels in one process (tests) do not collide. */
export function createPrometheusMetrics() {
  const registry = new Registry();
  const upstreamCalls = new Counter({
    name: 'opco_proxy_upstream_calls_total',
    help: 'Upstream calls by opco, route and outcome status',
    labelNames: ['opco', 'route', 'status'] as const,
    registers: [registry],
  });
  const upstreamLatency = new Histogram({
    name: 'opco_proxy_upstream_latency_seconds',
    help: 'Upstream call latency',
    labelNames: ['opco', 'route'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'opco_proxy_cache_lookups_total',
    help: 'Cache lookups by result',
    labelNames: ['opco', 'result'] as const,
    registers: [registry],
  });
  const driftWarnings = new Counter({
    name: 'opco_proxy_response_drift_warnings_total',
    help: 'Upstream answers that drifted from the schema (D14)',
    labelNames: ['opco', 'route'] as const,
    registers: [registry],
  });
  const jobsEnded = new Counter({
    name: 'opco_proxy_jobs_ended_total',
    help: 'Jobs that ended, by type and final status',
    labelNames: ['type', 'status'] as const,
    registers: [registry],
  });
  const deliveryAttempts = new Counter({
    name: 'opco_proxy_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const syncsEnded = new Counter({
    name: 'opco_proxy_syncs_ended_total',
    help: 'Bulk syncs that ended, by final status',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  return { registry, upstreamCalls, upstreamLatency, cacheLookups, driftWarnings, jobsEnded, deliveryAttempts, syncsEnded };
}
export type PrometheusMetrics = ReturnType<typeof createPrometheusMetrics>;
