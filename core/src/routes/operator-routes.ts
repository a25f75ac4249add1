/**
 * The operator routes core owns (P9): per configured opcoId its rate limit, how the admission
 * seam's provider sees its budget (the store budget, or the hub plugin with its connection), and
 * this instance's last 60 seconds of calls; the depth of each work queue plugins declared; and
 * every instance's counts minute by minute (issue 42, observability/history-reader.ts).
 * What belongs to a plugin (jobs, deliveries, syncs, pollers) is served by that plugin.
 */
import type { OperationRouter } from '../http/operation-router.js';
import type { MetricsWindow } from '../observability/metrics.js';
import type { HistoryReader } from '../observability/history-reader.js';
import type { OpcoDirectory } from '../profile/opco-directory.js';
import type { Queue } from '../ports/queue.js';
import { unprovenSlice, type AdmissionProvider } from '../limits/admission.js';

export interface OperatorRouteDeps {
  opcos: OpcoDirectory;
  window: MetricsWindow;
  queue: Queue;
  queueNames: ReadonlySet<string>;
  /** `tenantKeys.unprovenShare`: the slice of each budget unproven tenants share. */
  unprovenShare: number;
  admission(): AdmissionProvider;
  history: HistoryReader;
}

export function mountOperatorRoutes(router: OperationRouter, deps: OperatorRouteDeps): void {
  router.mount(
    'listAdminUpstreams',
    async () => {
      const admission = deps.admission();
      const items = await Promise.all(
        deps.opcos.list().map(async (opco) => {
          const { requests, errors, rateLimited, averageLatencyMs } = deps.window.snapshot(opco.id);
          const rateLimit = { limit: opco.rateLimit.limit, windowMs: opco.rateLimit.windowMs };
          const unprovenLimit = unprovenSlice(rateLimit.limit, deps.unprovenShare);
          const state = admission.describe
            ? await admission.describe({ id: opco.id, rateLimit, unprovenLimit })
            : { provider: admission.name, used: null, waiting: null };
          return {
            opcoId: opco.id,
            adapter: opco.adapter,
            rateLimit,
            window: { requests, errors, rateLimited, averageLatencyMs },
            admission: state,
          };
        }),
      );
      return { status: 200, body: { items } };
    },
    'kernel',
  );

  router.mount(
    'listAdminQueues',
    async () => ({
      status: 200,
      body: {
        kind: deps.queue.kind,
        items: await Promise.all([...deps.queueNames].map((name) => deps.queue.depth(name))),
      },
    }),
    'kernel',
  );

  router.mount(
    'getAdminHistory',
    async ({ query }) => ({ status: 200, body: await deps.history.answer(query) }),
    'kernel',
  );
}
