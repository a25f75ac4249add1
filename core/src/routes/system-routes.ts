/**
 * The service's own operations: /health (SPEC 4.1), /ready (P1, P3: store and queue answer and the
 * process is not stopping), /doc (4.2: the document of the operations this instance serves), /docs
 * (that document as a browsable page, reference-page.ts) and /metrics (Prometheus).
 */
import { buildOpenApi, type OpenApiDocument } from '@opco-proxy/schemas';
import { createError } from '../errors/errors.js';
import { mountReferencePage } from './reference-page.js';
import type { OperationRouter } from '../http/operation-router.js';
import type { InFlight } from '../http/request-context.js';
import type { Store } from '../ports/store.js';
import type { Queue } from '../ports/queue.js';
import type { PrometheusMetrics } from '../observability/metrics.js';
import type { Clock } from '../clock.js';

export interface SystemRouteDeps {
  store: Store;
  queue: Queue;
  prometheus: PrometheusMetrics;
  inFlight: InFlight;
  clock: Clock;
  readyTimeoutMs?: number;
}

export function mountSystemRoutes(router: OperationRouter, deps: SystemRouteDeps): void {
  router.mount('getHealth', () => ({ status: 200, body: { status: 'ok' } }), 'kernel');
  router.mount(
    'getReady',
    async () => {
      if (deps.inFlight.draining)
        throw createError('UNAVAILABLE', 'the process is stopping', { headers: { 'Retry-After': '1' } });
      const within = deps.readyTimeoutMs ?? 3000;
      await answers(`store (${deps.store.kind})`, deps.store.ping(), within, deps.clock);
      await answers(`queue (${deps.queue.kind})`, deps.queue.ping(), within, deps.clock);
      return { status: 200, body: { status: 'ready', store: deps.store.kind, queue: deps.queue.kind } };
    },
    'kernel',
  );
  let document: OpenApiDocument | undefined;
  // Built on first use: by then every plugin has mounted its operations.
  router.mount('getOpenApi', () => ({ status: 200, body: (document ??= buildOpenApi(router.ids())) }), 'kernel');
  mountReferencePage(router);
  router.mount(
    'getMetrics',
    async () => ({
      status: 200,
      body: await deps.prometheus.registry.metrics(),
      headers: { 'Content-Type': deps.prometheus.registry.contentType },
    }),
    'kernel',
  );
}

async function answers(what: string, ping: Promise<void>, ms: number, clock: Clock): Promise<void> {
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([ping, timeout]);
  } catch (err) {
    throw createError('UNAVAILABLE', `${what} unreachable`, { cause: err, headers: { 'Retry-After': '5' } });
  } finally {
    timer?.cancel();
  }
}
