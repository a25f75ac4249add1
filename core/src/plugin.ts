/**
 * Feature plugins (cache, jobs, sync, webhooks, hub): each a package exporting a Plugin whose
 * `register(api)` mounts operations, adds hooks, provides seams and registers its metrics. A
 * plugin gets only what it needs (in the manner of Fastify's encapsulated instances): its own
 * config section, a sealer instead of the master key, the opco directory without secrets.
 * Plugins are registered in dependency order; hooks, seams and routes are fixed once the kernel
 * is ready, and a later change is an error.
 */
import { kernelError } from './errors/kernel-errors.js';
import { loadModule, packageName, type Bundled } from './host/module-loader.js';
import type { OperationId } from '@opco-proxy/schemas';
import type { Clock } from './clock.js';
import type { Sealer } from './crypto/crypto.js';
import type { HookHandlers, HookName } from './host/hooks.js';
import type { Store } from './ports/store.js';
import type { Queue } from './ports/queue.js';
import type { Logger } from './observability/logger.js';
import type { HeldWork } from './limits/held-work.js';
import type { OpcoDirectory } from './profile/opco-directory.js';
import type { Pipeline } from './pipeline/pipeline.js';
import type { MetricsWindow, PluginMetrics } from './observability/metrics.js';
import type { DomainEvent } from './host/events.js';
import type { SeamName, Seams } from './host/seams.js';
import type { OperationHandler } from './http/operation-router.js';
import type { Registry } from 'prom-client';
import type { HostResolver } from './http/host-resolver.js';

export type ProcessRole = 'serve' | 'api' | 'worker';

/**
 * Durable work a worker restores and keeps moving (SPEC 3.1, D20, D25): `requeue(graceMs)` queues
 * again the unfinished records due `graceMs` ago or more (their message may be lost). With a
 * queue that does not outlive the process, every unfinished record is requeued at start.
 */
export interface RecoverySpec {
  name: string;
  intervalMs: number;
  /** How long a record may stay due before its message counts as lost. */
  graceMs: number;
  /** Queues again the unfinished, unheld work due at `dueBefore` or earlier. */
  requeue(dueBefore: Date): Promise<unknown>;
  /**
   * The longest lease of this work. With a queue that keeps nothing, a record a dead process
   * still held at start is not restored (its lease is live); restoring again once that long has
   * passed queues it without waiting for the sweep's grace.
   */
  leaseMs?: number;
}

export interface PluginApi<C = unknown> {
  /** The plugin's short name (`jobs`). */
  readonly name: string;
  readonly role: ProcessRole;
  /** `development` allows http:// and loopback webhook targets (D3). */
  readonly mode: 'production' | 'development';
  /** The plugin's own config section, defaults applied. */
  readonly config: C;
  /** Request body and file limits (D7). */
  readonly limits: { bodyBytes: number; fileBytes: number };
  readonly log: Logger;
  readonly clock: Clock;
  readonly store: Store;
  readonly queue: Queue;
  /** Seals secrets bound to a record id (SPEC 5.4). */
  readonly sealer: Sealer;
  readonly opcos: OpcoDirectory;
  readonly pipeline: Pipeline;
  /** Step 9's sliding windows, per opcoId. */
  readonly window: MetricsWindow;
  /** Registers the plugin's own Prometheus metrics on the kernel's registry. */
  readonly metrics: PluginMetrics;
  /** The kernel's registry, for libraries that register their own metrics on one. */
  readonly registry: Registry;
  /** The environment, where secrets named by the plugin's config live (`apiKeyEnv`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly resolveHost: HostResolver;
  /**
   * What tenants the upstream has not accepted yet may keep stored, per client address (P13):
   * a plugin registers the records it keeps and stores each one through `admit`.
   */
  readonly heldWork: Pick<HeldWork, 'register' | 'admit'>;
  addHook<K extends HookName>(name: K, handler: HookHandlers[K]): void;
  /** Takes a seam (admission): a second provider of one seam is a start-up error naming both. */
  provide<K extends SeamName>(seam: K, provider: Seams[K]): void;
  /** Names a work queue the plugin publishes to or consumes from: operators see its depth (GET /admin/queues). */
  declareQueue(name: string): void;
  /** Serves an operation of the route manifest (schemas/src/route-manifest.ts). */
  route<Op extends OperationId>(operation: Op, handler: NoInfer<OperationHandler<Op>>): void;
  /** Emits a domain event; an `id` derived from its cause makes a re-emitted event the same one. */
  emit: (event: Omit<DomainEvent, 'id' | 'timestamp'> & { id?: string }) => Promise<void>;
  /**
   * Runs `task` every `intervalMs` once the kernel is ready (workers only), until it closes. A task
   * that knows when it next has work answers `{nextRunInMs}` and waits that long instead; `wake()`
   * runs it at once when this process has just given it work (PeriodicTask).
   */
  every(name: string, intervalMs: number, task: () => Promise<unknown>): { wake(): void };
  /** Restores durable work at start and re-queues lost work periodically (workers only). */
  recover(spec: RecoverySpec): void;
}

/**
 * The version of this API (PluginApi, Plugin, the hooks and seams a plugin uses). A change that
 * breaks a plugin written for it is a new version; a plugin says which one it targets, and the
 * service refuses one it does not run (absent means 1).
 */
export const PLUGIN_API_VERSION = 1;
/** The plugin API versions this core runs. */
export const SUPPORTED_PLUGIN_APIS: readonly number[] = [PLUGIN_API_VERSION];

export interface Plugin<C = unknown> {
  name: string;
  /** The plugin API version it is written for (default 1): one this service does not run is refused at start. */
  apiVersion?: number;
  /** Plugins it needs registered before it (a missing one is a start-up error). */
  dependencies?: string[];
  register(api: PluginApi<C>): Promise<void> | void;
}

export function definePlugin<C>(plugin: Plugin<C>): Plugin<C> {
  return plugin;
}

/** Loads the named plugins and orders them so that each comes after its dependencies. */
export async function loadPlugins(names: string[], extra: Plugin[] = [], bundled: Bundled = {}): Promise<Plugin[]> {
  const loaded = new Map<string, Plugin>();
  for (const [index, name] of names.entries()) {
    const plugin = await loadModule<Plugin>('plugin', name, `plugins[${index}]`, bundled);
    if (typeof plugin?.register !== 'function') throw kernelError('OPCO_ERR_PLUGIN_INVALID', { index, name });
    const target = plugin.apiVersion ?? PLUGIN_API_VERSION;
    if (!SUPPORTED_PLUGIN_APIS.includes(target)) {
      throw kernelError('OPCO_ERR_PLUGIN_API_UNSUPPORTED', {
        index,
        package: packageName('plugin', name),
        target: String(target),
        supported: SUPPORTED_PLUGIN_APIS.join(', '),
      });
    }
    loaded.set(plugin.name, plugin);
  }
  for (const plugin of extra) loaded.set(plugin.name, plugin);
  const ordered: Plugin[] = [];
  const visiting = new Set<string>();
  const visit = (plugin: Plugin) => {
    if (ordered.includes(plugin)) return;
    if (visiting.has(plugin.name)) throw kernelError('OPCO_ERR_PLUGIN_DEPENDENCY_CYCLE', { plugin: plugin.name });
    visiting.add(plugin.name);
    for (const dependency of plugin.dependencies ?? []) {
      const required = loaded.get(dependency);
      if (!required) throw kernelError('OPCO_ERR_PLUGIN_DEPENDENCY_MISSING', { plugin: plugin.name, dependency });
      visit(required);
    }
    ordered.push(plugin);
  };
  for (const plugin of loaded.values()) visit(plugin);
  return ordered;
}
