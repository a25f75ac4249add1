/**
 * Pipeline step 9: per-opco figures over a sliding 60-second window (SPEC 1.1, 8), read by
 * GET /{opcoId}/status (D13) and by the hub; plus Prometheus counters for operators at /metrics.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import { settlesBy, systemClock, type Clock } from '../clock.js';
import type { Queue } from '../ports/queue.js';
import type { Store } from '../ports/store.js';
import { StoreAge, STORE_GAUGE, type AgeGaugeConfiguration } from './store-gauge.js';
import { kernelError } from '../errors/kernel-errors.js';

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
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly windowMs = 60_000,
    private readonly bucketMs = 1_000,
  ) {}

  /** Every opcoId that has figures. */
  opcoIds(): string[] {
    return [...this.buckets.keys()];
  }

  record(opcoId: string, outcome: CallOutcome, now = this.clock.now()): void {
    const bucket = this.bucketAt(opcoId, now);
    bucket.requests += 1;
    bucket.latencyMs += outcome.latencyMs;
    bucket.warnings += outcome.warnings;
    if (outcome.error) bucket.errors += 1;
    if (outcome.status === 429) bucket.rateLimited += 1;
  }

  snapshot(opcoId: string, now = this.clock.now()): WindowSnapshot {
    const total: WindowSnapshot = {
      requests: 0,
      errors: 0,
      rateLimited: 0,
      warnings: 0,
      errorRate: 0,
      averageLatencyMs: 0,
    };
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
  collectDefaultMetrics({ register: registry, prefix: 'opco_proxy_' });
  const upstreamCalls = new Counter({
    name: 'opco_proxy_upstream_calls_total',
    help: 'Upstream calls by opco, route and outcome: the status answered, or timeout or network when none came',
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
  const driftWarnings = new Counter({
    name: 'opco_proxy_response_drift_warnings_total',
    help: 'Upstream answers that drifted from the schema (D14)',
    labelNames: ['opco', 'route'] as const,
    registers: [registry],
  });
  const httpRequests = new Counter({
    name: 'opco_proxy_http_requests_total',
    help: 'Requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'opco_proxy_http_request_duration_seconds',
    help: 'Time to answer a request, by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // The public edge (issue 27): who spends the upstream budget, and what strangers were refused.
  const budgetCalls = new Counter({
    name: 'opco_proxy_budget_calls_total',
    help: "Upstream calls admitted (pipeline step 4), by opco and by whether the tenant's key is proven or unproven",
    labelNames: ['opco', 'tenant'] as const,
    registers: [registry],
  });
  const keyRefusals = new Counter({
    name: 'opco_proxy_key_refusals_total',
    help: 'CFA keys the upstream refused (401/403 on the key), remembered for tenantKeys.refusedTtlS',
    labelNames: ['opco'] as const,
    registers: [registry],
  });
  const refusedKeyHits = new Counter({
    name: 'opco_proxy_refused_key_hits_total',
    help: 'Requests answered 403 locally because the upstream refused their key lately (no budget spent)',
    labelNames: ['opco'] as const,
    registers: [registry],
  });
  const addressRefusals = new Counter({
    name: 'opco_proxy_address_refusals_total',
    help: 'Requests refused 429 by the per-address limits: unproven (requests of unproven keys), failed-auth (after failed authentications), backoff (wrong operator keys)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const auditRecords = new Counter({
    name: 'opco_proxy_audit_records_total',
    help: 'Audit records written (D32), by action (operationId) and the status the request was answered',
    labelNames: ['action', 'status'] as const,
    registers: [registry],
  });
  const auditFailures = new Counter({
    name: 'opco_proxy_audit_write_failures_total',
    help: 'Audit records that could not be written; their requests were answered 503',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  return {
    registry,
    upstreamCalls,
    upstreamLatency,
    driftWarnings,
    httpRequests,
    httpDuration,
    budgetCalls,
    keyRefusals,
    refusedKeyHits,
    addressRefusals,
    auditRecords,
    auditFailures,
  };
}

/** Work-queue depths, asked of the backend at each scrape; a queue that does not answer keeps its last value. */
export function queueDepthGauge(
  registry: Registry,
  queue: Pick<Queue, 'depth'>,
  names: ReadonlySet<string>,
): Gauge<'queue' | 'state'> {
  return new Gauge({
    name: 'opco_proxy_queue_depth',
    help: 'Messages in each work queue: ready (waiting for a consumer), delayed (waiting out a retry delay), unacknowledged (being worked on)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      await Promise.all(
        [...names].map(async (name) => {
          const depth = await queue.depth(name).catch(() => undefined);
          if (!depth) return;
          this.set({ queue: name, state: 'ready' }, depth.ready);
          if (depth.delayed !== null) this.set({ queue: name, state: 'delayed' }, depth.delayed);
          if (depth.unacknowledged !== null) this.set({ queue: name, state: 'unacknowledged' }, depth.unacknowledged);
        }),
      );
    },
  });
}
/**
 * Whether the store and the queue answer this process, asked at each scrape (what /ready checks),
 * so an alert can tell a backend down from a slow one. A ping that has not answered within
 * `STORE_GAUGE.WAIT_MS` counts as down: a hung backend must not hang /metrics either.
 */
export function backendUpGauge(
  registry: Registry,
  backends: { store: Pick<Store, 'ping' | 'kind'>; queue: Pick<Queue, 'ping' | 'kind'> },
  clock: Clock,
): Gauge<'backend' | 'kind'> {
  return new Gauge({
    name: 'opco_proxy_backend_up',
    help: 'Whether the store and the queue answered a ping at this scrape (1) or not within 2 s (0), by backend (store, queue) and kind',
    labelNames: ['backend', 'kind'] as const,
    registers: [registry],
    async collect() {
      await Promise.all(
        (['store', 'queue'] as const).map(async (backend) => {
          const { kind } = backends[backend];
          let answered = false;
          const ping = backends[backend].ping().then(
            () => void (answered = true),
            () => undefined,
          );
          await settlesBy(clock, clock.now() + STORE_GAUGE.WAIT_MS, ping);
          this.set({ backend, kind }, answered ? 1 : 0);
        }),
      );
    },
  });
}
export type PrometheusMetrics = ReturnType<typeof createPrometheusMetrics>;

/** How a plugin adds its own metrics to the kernel's registry; every name starts with `opco_proxy_`. */
export interface PluginMetrics {
  counter<L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L>;
  gauge<L extends string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L>;
  histogram<L extends string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L>;
  /** Seconds since a moment read from the store, read no more often than its cost allows (store-gauge.ts). */
  ageGauge(config: AgeGaugeConfiguration): Gauge;
}

export function pluginMetrics(registry: Registry, plugin: string, clock: Clock): PluginMetrics {
  const named = <T extends { name: string }>(config: T): T & { registers: Registry[] } => {
    if (!config.name.startsWith('opco_proxy_'))
      throw kernelError('OPCO_ERR_METRIC_NAME', { plugin, metric: config.name });
    return { ...config, registers: [registry] };
  };
  return {
    counter: (config) => new Counter(named(config)),
    gauge: (config) => new Gauge(named(config)),
    histogram: (config) => new Histogram(named(config)),
    ageGauge: ({ name, help, since }) => {
      const age = new StoreAge(clock, since);
      return new Gauge(
        named({
          name,
          help,
          async collect() {
            const seconds = await age.seconds();
            if (seconds !== undefined) this.set(seconds);
          },
        }),
      );
    },
  };
}
