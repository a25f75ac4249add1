/**
 * createKernel(config): opens the store and queue, resolves adapters and their authentication,
 * registers plugins in dependency order (each with its own narrow API), fills the seams plugins
 * left to the defaults, then builds the Koa app. Once ready, hooks, seams and routes are fixed.
 * `close()` stops gracefully (P3): no new connections, requests in flight finish within the
 * grace period, workers finish or release their work, then the plugins' close hooks run in
 * reverse order and the backends close.
 */
import type { Server } from 'node:http';
import Koa from 'koa';
import { Hooks } from './host/hooks.js';
import { createBatchedLogger, createLogger, type Logger } from './observability/logger.js';
import {
  MetricsWindow,
  backendUpGauge,
  createPrometheusMetrics,
  pluginMetrics,
  queueDepthGauge,
  type PrometheusMetrics,
} from './observability/metrics.js';
import { UpstreamClient } from './pipeline/upstream-client.js';
import { StoreBudgetAdmission, UpstreamBudget } from './limits/store-budget.js';
import { Pipeline } from './pipeline/pipeline.js';
import { OpcoDirectory } from './profile/opco-directory.js';
import { RequestRate } from './limits/request-rate.js';
import { STANDING_SWEEP_MS, TenantStanding } from './limits/tenant-standing.js';
import { HeldWork, type HeldBounds } from './limits/held-work.js';
import { AddressLimits } from './limits/address-limits.js';
import { AuditLog } from './audit/audit-log.js';
import { AuditTrail } from './audit/audit-trail.js';
import { mountAuditRoutes } from './audit/audit-routes.js';
import { TrustedProxies } from './http/client-address.js';
import { SeamRegistry } from './host/seams.js';
import { loadPlugins, type Plugin, type ProcessRole } from './plugin.js';
import { systemResolver, type HostResolver } from './http/host-resolver.js';
import { listenAt } from './http/listening-url.js';
import { openQueue, openStore } from './host/drivers.js';
import type { Bundled } from './host/module-loader.js';
import { settlesBy, systemClock, type Clock } from './clock.js';
import { randomHex } from './crypto/crypto.js';
import { oauthClientCredentials } from './upstream-auth/oauth-client-credentials.js';
import { OperationRouter } from './http/operation-router.js';
import { InFlight, requestContext } from './http/request-context.js';
import { accessLog, requestLog } from './http/access-log.js';
import { earlyPath } from './http/early-path.js';
import { renderErrors } from './http/error-renderer.js';
import { answerClientErrors } from './http/client-errors.js';
import { closeGracefully } from './http/graceful-close.js';
import { createGuardedServer, serverLimits } from './http/connection-limits.js';
import { httpMetrics } from './http/http-metrics.js';
import { listenForMetrics, type MetricsListener } from './http/metrics-listener.js';
import { mountReadRoutes } from './routes/read-routes.js';
import { mountSystemRoutes } from './routes/system-routes.js';
import { mountOperatorRoutes } from './routes/operator-routes.js';
import { HISTORY_PURGE_INTERVAL_MS, HistoryLog } from './observability/history-log.js';
import { HistoryRecorder } from './observability/history-recorder.js';
import { HistoryReader } from './observability/history-reader.js';
import { PluginHost, type Emit } from './host/plugin-host.js';
import type { ResolvedConfig } from './config/config.js';
import type { Store } from './ports/store.js';
import type { Queue } from './ports/queue.js';
import type { DomainEvent } from './host/events.js';
import type { State } from './http/state.js';

export interface KernelOptions {
  /** A store shared with other kernels (tests of several instances); not closed by this kernel. */
  store?: Store;
  /** A queue shared with other kernels; not closed by this kernel. */
  queue?: Queue;
  log?: Logger;
  role?: ProcessRole;
  /** Replaces the system resolver (tests of DNS-dependent checks). */
  resolveHost?: HostResolver;
  /** Replaces the system clock (tests move time instead of sleeping). */
  clock?: Clock;
  /** Plugins given as objects, registered with the configured ones (tests, embedders). */
  plugins?: Plugin[];
  /** The drivers, plugins and adapters the application ships (`@opco-proxy/server`'s BUNDLED). */
  bundled?: Bundled;
}

export interface Kernel {
  config: ResolvedConfig;
  role: ProcessRole;
  log: Logger;
  clock: Clock;
  store: Store;
  queue: Queue;
  opcos: OpcoDirectory;
  pipeline: Pipeline;
  window: MetricsWindow;
  prometheus: PrometheusMetrics;
  app: Koa<State>;
  emit: Emit;
  /** Starts HTTP (not in the worker role); resolves with the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** The worker role's GET /metrics only (http/metrics-listener.ts); resolves with its base URL. */
  listenMetrics(port: number, host?: string): Promise<string>;
  /** Stops gracefully within `graceMs` (default: config `shutdownGraceMs`). */
  close(options?: { graceMs?: number }): Promise<void>;
}

export async function createKernel(config: ResolvedConfig, options: KernelOptions = {}): Promise<Kernel> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  const clock = options.clock ?? systemClock;
  const role = options.role ?? 'serve';
  const bundled = options.bundled ?? {};
  const store = options.store ?? (await openStore(config.store, bundled, { clock }));
  const queue =
    options.queue ??
    (await openQueue(config.queue, bundled, { clock, log }).catch(async (err: unknown) => {
      if (!options.store) await store.close();
      throw err;
    }));
  const hooks = new Hooks();
  const seams = new SeamRegistry();
  const window = new MetricsWindow(clock);
  const prometheus = createPrometheusMetrics();
  const inFlight = new InFlight();
  const standing = new TenantStanding(store, clock, config.tenantKeys, (opcoId) =>
    prometheus.refusedKeyHits.inc({ opco: opcoId }),
  );
  const heldWork = new HeldWork(
    clock,
    config.tenantKeys.unprovenHoldings as HeldBounds,
    async (tenant) => (await standing.of(undefined, tenant)) === 'proven',
    (bound) => prometheus.addressRefusals.inc({ reason: `held-${bound}` }),
  );
  standing.onRefusal(({ tenant, wasProven }) => {
    if (!wasProven)
      heldWork
        .refused(tenant)
        .catch((err: unknown) => log.warn({ err }, 'what a refused key stored could not be dropped'));
  });
  const opcos = await OpcoDirectory.load(config.opcos, clock, bundled);
  const auditLog = new AuditLog(store, clock);
  const audit = new AuditTrail({
    log: auditLog,
    reads: config.audit.reads,
    logger: log,
    knownOpco: (opcoId) => opcos.has(opcoId),
    counted: (action, status) => prometheus.auditRecords.inc({ action, status: String(status) }),
    failed: (action) => prometheus.auditFailures.inc({ action }),
  });
  const router = new OperationRouter({
    bodyBytes: config.limits.bodyBytes,
    fileBytes: config.limits.fileBytes,
    bodyBounds: config.limits,
    rate: new RequestRate(config.tenantRateLimit, clock),
    allowList: new Set(config.allowedTenants),
    adminKey: config.adminKey,
    standing,
    addresses: new AddressLimits(config.addressRateLimit, clock, (reason) =>
      prometheus.addressRefusals.inc({ reason }),
    ),
    proxies: new TrustedProxies(config.trustedProxies),
    audit,
  });
  const client = new UpstreamClient({
    publisher: config.publisher,
    timeoutMs: config.upstream.timeoutMs,
    maxAnswerBytes: config.upstream.maxAnswerBytes,
  });
  for (const opco of opcos.list()) {
    const strategy = opco.profile.auth ?? oauthClientCredentials();
    const entry = config.opcos[opco.id] as unknown as Record<string, unknown>;
    client.authenticate(
      opco.id,
      strategy.setup({
        opcoId: opco.id,
        adapter: opco.adapter,
        entry,
        env: config.env,
        clock,
        timeoutMs: config.upstream.timeoutMs,
        send: client.transport,
      }),
    );
  }
  const { unprovenShare, calmUnprovenShare } = config.tenantKeys;
  const pipeline = new Pipeline({
    hooks,
    client,
    window,
    prometheus,
    log,
    clock,
    admission: () => seams.get('admission'),
    standing,
    unprovenShare,
    calmUnprovenShare,
  });
  const emit: Emit = async (event) => {
    const full: DomainEvent = { ...event, id: event.id ?? randomHex(16), timestamp: clock.date().toISOString() };
    await hooks.runEvent(full, (err) => log.error({ err, event: full.type }, 'event handler failed'));
  };

  mountSystemRoutes(router, { store, queue, prometheus, inFlight, clock });
  mountReadRoutes(router, { opcos, pipeline, window, clock, startedAt: clock.now() });
  mountAuditRoutes(router, auditLog);

  const queueNames = new Set<string>();
  queueDepthGauge(prometheus.registry, queue, queueNames);
  backendUpGauge(prometheus.registry, { store, queue }, clock);
  const historyLog = new HistoryLog(store, clock);
  const { retentionDays } = config.history;
  const recorder = config.history.enabled
    ? new HistoryRecorder({ registry: prometheus.registry, history: historyLog, clock, log, retentionDays })
    : undefined;
  mountOperatorRoutes(router, {
    opcos,
    window,
    queue,
    queueNames,
    unprovenShare,
    admission: () => seams.get('admission'),
    history: new HistoryReader({ history: historyLog, clock, retentionDays, opcos }),
  });

  const resolveHost = options.resolveHost ?? systemResolver;
  const host = new PluginHost({
    config,
    role,
    log,
    clock,
    store,
    queue,
    hooks,
    seams,
    router,
    opcos,
    pipeline,
    window,
    registry: prometheus.registry,
    emit,
    resolveHost,
    queueNames,
    heldWork,
  });
  for (const plugin of await loadPlugins(config.plugins, options.plugins, bundled)) {
    await plugin.register(host.apiFor(plugin.name, pluginMetrics(prometheus.registry, plugin.name, clock)));
    log.debug({ plugin: plugin.name }, 'plugin registered');
  }
  if (!seams.has('admission')) {
    const budget = new UpstreamBudget(store, clock);
    seams.provide('admission', new StoreBudgetAdmission(budget), 'kernel');
    host.addTask('upstream-budget:asks', STANDING_SWEEP_MS, () => budget.share.sweep());
  }

  const app = new Koa<State>();
  app.proxy = false;
  app.silent = true;
  app.use(requestContext(inFlight));
  app.use(httpMetrics(prometheus, clock));
  // A logger given by the caller (tests, embedders) takes the access lines too.
  const accessLines =
    options.log || config.logLevel === 'silent' ? undefined : createBatchedLogger({ level: config.logLevel });
  const write = requestLog(accessLines?.log ?? log);
  app.use(accessLog(write, clock));
  app.use(renderErrors(log));
  app.use(router.middleware());
  const chain = app.callback();
  const early = earlyPath({ router, inFlight, write, prometheus, clock, log });

  await standing.prepare();
  await auditLog.prepare();
  host.addTask('tenant-standing:sweep', STANDING_SWEEP_MS, () => standing.sweep());
  host.addTask('audit:purge', config.audit.sweepIntervalMs, () => auditLog.purge(config.audit.retentionDays));
  await historyLog.prepare();
  // Minutes written before history was turned off expire too.
  host.addTask('history:purge', HISTORY_PURGE_INTERVAL_MS, () => historyLog.purge());
  await hooks.runLifecycle('ready');
  await host.start();
  recorder?.start();
  hooks.freeze();
  seams.freeze();

  let server: Server | undefined;
  let metricsListener: MetricsListener | undefined;
  let closing: Promise<void> | undefined;
  const close = async (graceMs: number) => {
    const deadline = clock.now() + graceMs;
    if (server) {
      const { cut } = await closeGracefully(server, inFlight, graceMs, clock);
      if (cut > 0) log.warn({ cut }, 'requests still in flight at the end of the grace period were cut');
    }
    inFlight.draining = true;
    await host.stop();
    await metricsListener?.close();
    await hooks.runLifecycle('close', (err) => log.error({ err }, 'close hook failed'), { deadline });
    // Once nothing counts any more: the minute in progress, so that a restart loses none of it.
    await settlesBy(clock, Math.max(deadline, clock.now() + 1000), recorder?.stop());
    const backends: Promise<unknown>[] = [client.close()];
    if (!options.queue) backends.push(queue.close());
    if (!options.store) backends.push(store.close());
    // A backend that does not answer must not keep a stopping process alive past its grace.
    await settlesBy(clock, Math.max(deadline, clock.now() + 1000), Promise.allSettled(backends));
    accessLines?.flush();
  };

  return {
    config,
    role,
    log,
    clock,
    store,
    queue,
    opcos,
    pipeline,
    window,
    prometheus,
    app,
    emit,
    async listen(port = config.port, hostName = config.host) {
      // Slow and greedy clients are bounded as the config's `server` section says (connection-limits.ts).
      server = createGuardedServer(
        serverLimits(config),
        (req, res) => {
          if (!early(req, res)) void chain(req, res);
        },
        { proxies: new TrustedProxies(config.trustedProxies), registry: prometheus.registry },
      );
      answerClientErrors(server);
      return listenAt(server, port, hostName);
    },
    async listenMetrics(port, hostName = config.host) {
      metricsListener = await listenForMetrics(prometheus.registry, port, hostName, serverLimits(config));
      return metricsListener.url;
    },
    close(closeOptions = {}) {
      closing ??= close(closeOptions.graceMs ?? config.shutdownGraceMs);
      return closing;
    },
  };
}
