/**
 * createKernel(config): validates nothing twice (config is resolved by `resolveConfig`), opens
 * the store, resolves adapters, registers plugins in dependency order, then builds the Koa app.
 * `close()` stops the server and runs the plugins' close hooks in reverse order.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { Hooks } from './hooks.js';
import { createLogger, type Logger } from './logger.js';
import { MetricsWindow, createPrometheusMetrics } from './metrics.js';
import { TokenManager } from './token-manager.js';
import { UpstreamClient } from './upstream-client.js';
import { UpstreamBudget } from './upstream-budget.js';
import { Pipeline } from './pipeline.js';
import { OpcoRegistry } from './opco-registry.js';
import { RequestRate } from './request-rate.js';
import { loadPlugins, type HostResolver, type PluginApi, type ProcessRole } from './plugin.js';
import { lookup } from 'node:dns/promises';
import { openStore } from './store-backends.js';
import { openQueue } from './queue-backends.js';
import { accessLog, apiVersion, parseBody, renderErrors, requireTenant, type State } from './http-middleware.js';
import { mountReadRoutes } from './read-routes.js';
import { mountSystemRoutes } from './system-routes.js';
import { PluginRoutes } from './plugin-routes.js';
import { randomHex } from './crypto.js';
import { createError } from './errors.js';
import { PRIORITY } from './call-context.js';
import type { ResolvedConfig } from './config.js';
import type { Store } from './ports/store.js';
import type { Queue } from './ports/queue.js';
import type { DomainEvent } from './events.js';

export interface KernelOptions {
  /** A store shared with other kernels (tests of several instances); not closed by this kernel. */
  store?: Store;
  /** A queue shared with other kernels; not closed by this kernel. */
  queue?: Queue;
  log?: Logger;
  role?: ProcessRole;
  /** Replaces the system resolver (tests of DNS-dependent checks). */
  resolveHost?: HostResolver;
}

export interface Kernel {
  config: ResolvedConfig;
  role: ProcessRole;
  log: Logger;
  store: Store;
  queue: Queue;
  hooks: Hooks;
  opcos: OpcoRegistry;
  pipeline: Pipeline;
  tokens: TokenManager;
  window: MetricsWindow;
  app: Koa<State>;
  emit: PluginApi['emit'];
  /** Starts HTTP (not in the worker role); resolves with the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

export async function createKernel(config: ResolvedConfig, options: KernelOptions = {}): Promise<Kernel> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  const role = options.role ?? 'serve';
  const store = options.store ?? (await openStore(config.store));
  const ownsStore = !options.store;
  const queue = options.queue ?? (await openQueue(config.queue));
  const ownsQueue = !options.queue;
  const hooks = new Hooks();
  const window = new MetricsWindow();
  const prometheus = createPrometheusMetrics();
  const tokens = new TokenManager({ timeoutMs: config.upstream.timeoutMs });
  const client = new UpstreamClient({ tokens, publisher: config.publisher, timeoutMs: config.upstream.timeoutMs });
  const pipeline = new Pipeline({ hooks, client, window, prometheus, log });
  const budget = new UpstreamBudget(store);
  const opcos = await OpcoRegistry.load(config);
  const emit: PluginApi['emit'] = async (event) => {
    const full: DomainEvent = { ...event, id: event.id ?? randomHex(16), timestamp: new Date().toISOString() };
    await hooks.runEvent(full, (err) => log.error({ err, event: full.type }, 'event handler failed'));
  };

  if (!config.plugins.includes('hub')) {
    // Step 4 without a hub: the shared budget, which refuses with 429 when exhausted.
    // Client requests are refused when it is exhausted; background work (sync, polling) waits.
    hooks.add('admit', async (ctx) => {
      const lease = ctx.priority > PRIORITY.client
        ? await budget.acquireWaiting(ctx.opco, ctx.priority, ctx.cancelled)
        : await budget.acquire(ctx.opco, ctx.priority);
      if (!lease) throw createError('UNAVAILABLE', 'the work was cancelled while waiting for upstream budget');
      ctx.releaseBudget = () => lease.release();
    });
  }

  const pluginRoutes = new PluginRoutes();
  const resolveHost: HostResolver = options.resolveHost ?? (async (hostname) => (await lookup(hostname, { all: true, verbatim: true })) as Array<{ address: string; family: 4 | 6 }>);
  const api: PluginApi = { config, role, log, store, queue, hooks, router: pluginRoutes, opcos, pipeline, budget, window, prometheus, emit, resolveHost };
  for (const plugin of await loadPlugins(config.plugins)) {
    await plugin.register(api);
    log.debug({ plugin: plugin.name }, 'plugin registered');
  }

  const app = new Koa<State>();
  app.proxy = false;
  app.silent = true;
  const router = new Router<State>();
  mountSystemRoutes(router as unknown as Router, { store, queue, prometheus });
  router.use(pluginRoutes.fixed.routes());
  mountReadRoutes(router, { opcos, pipeline, window, startedAt: Date.now() });
  router.use(pluginRoutes.byOpco.routes());
  app.use(apiVersion());
  app.use(renderErrors(log));
  app.use(accessLog(log));
  app.use(requireTenant(new RequestRate(config.tenantRateLimit), new Set(config.allowedTenants)));
  app.use(parseBody(config.limits.bodyBytes));
  app.use(router.routes());

  let server: Server | undefined;
  await hooks.runLifecycle('ready');

  return {
    config, role, log, store, queue, hooks, opcos, pipeline, tokens, window, app, emit,
    async listen(port = config.port, host = config.host) {
      server = app.listen(port, host);
      await once(server, 'listening');
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`;
    },
    async close() {
      if (server) {
        const closing = once(server, 'close');
        server.close();
        server.closeAllConnections();
        await closing;
      }
      await hooks.runLifecycle('close', (err) => log.error({ err }, 'close hook failed'));
      if (ownsQueue) await queue.close();
      if (ownsStore) await store.close();
    },
  };
}
