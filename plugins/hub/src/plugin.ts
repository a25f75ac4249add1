/**
 * The `hub` feature plugin (D3 `plugins: [..., "hub"]` with a `hub` section): the instance side,
 * plugged into the kernel.
 *
 * Core's admission seam (AdmissionProvider) is not wired into the kernel yet; until it is, this
 * bridges HubAdmission onto the pipeline's `admit` hook, which the kernel leaves to this plugin
 * when `hub` is enabled. Once the seam exists, `register` provides `admission` instead and the
 * bridge goes.
 */
import { definePlugin, PRIORITY, type CallContext, type PluginApi } from '@opco-proxy/core';
import type { MetricsReport } from './protocol.js';
import { createHubAdmission, type HubClientConfig } from './client/hub-admission.js';

export const hubPlugin = definePlugin({
  name: 'hub',
  register(api: PluginApi) {
    const hub = api.config.hub as HubClientConfig | undefined;
    if (!hub) return; // the kernel's config check requires it when the plugin is enabled
    const admission = createHubAdmission({
      hub, env: process.env, log: api.log, registry: api.prometheus.registry,
      // Spec 1.1 step 9: the kernel's own 60-second windows, per configured opcoId.
      metrics: () => {
        const windows: Record<string, MetricsReport> = {};
        for (const opco of api.opcos.list()) {
          const { requests, errors, rateLimited, averageLatencyMs } = api.window.snapshot(opco.id);
          windows[opco.id] = { requests, errors, rateLimited, averageLatencyMs };
        }
        return windows;
      },
    });
    api.hooks.add('admit', async (ctx: CallContext) => {
      const lease = await admission.admit({
        opcoId: ctx.opco.id,
        rateLimit: ctx.opco.rateLimit,
        route: ctx.route,
        method: ctx.method,
        priority: ctx.priority,
        tenant: ctx.tenant.hash,
        // A client's request (priority 1) waits at most maxWaitMs; worker jobs, sync and polling wait.
        synchronous: ctx.priority <= PRIORITY.client,
        cancelled: ctx.cancelled,
      });
      Object.assign(ctx.upstreamHeaders, lease.headers);
      ctx.releaseBudget = async () => {
        const status = ctx.error ? ctx.error.status : (ctx.response?.status ?? 0);
        await lease.release({ status, latencyMs: Date.now() - ctx.startedAt });
      };
    });
    api.hooks.add('close', () => admission.close());
  },
});

export default hubPlugin;
