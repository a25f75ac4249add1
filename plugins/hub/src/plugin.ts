/**
 * The `hub` feature plugin (D3 `plugins: [..., "hub"]` with a `hub` section): the instance side.
 * It provides the admission seam (pipeline step 4) with HubAdmission, which replaces the store
 * budget: grants from the hub when connected, the local bucket when not (D29, D30).
 */
import { definePlugin, type PluginApi } from '@opco-proxy/core';
import type { MetricsReport } from './protocol.js';
import { configureHubAdmission } from './client/hub-admission.js';
import type { HubPluginConfig } from './generated/config.js';

export const hubPlugin = definePlugin({
  name: 'hub',
  register(api: PluginApi<HubPluginConfig>) {
    const admission = configureHubAdmission({
      hub: api.config,
      env: api.env,
      clock: api.clock,
      log: api.log,
      registry: api.registry,
      // SPEC 1.1 step 9: the kernel's own 60-second windows, per configured opcoId.
      metrics: () => {
        const windows: Record<string, MetricsReport> = {};
        for (const opco of api.opcos.list()) {
          const { requests, errors, rateLimited, averageLatencyMs } = api.window.snapshot(opco.id);
          windows[opco.id] = { requests, errors, rateLimited, averageLatencyMs };
        }
        return windows;
      },
    });
    // Provided first, connected once the kernel is ready: a start-up that fails after this
    // plugin registered (two admission providers, say) must not leave a connection behind.
    api.provide('admission', admission);
    api.addHook('ready', () => admission.start());
    api.addHook('close', () => admission.close());
  },
});

export default hubPlugin;
