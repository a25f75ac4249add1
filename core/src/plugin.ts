/**
 * Feature plugins (cache, jobs, sync, webhooks, hub): each a package exporting a Plugin whose
 * `register(api)` adds hooks and routes. Registered in dependency order, closed in reverse.
 */
import { ConfigError, type ResolvedConfig } from './config.js';
import { loadModule } from './module-loader.js';
import type { Hooks } from './hooks.js';
import type { Store } from './ports/store.js';
import type { Queue } from './ports/queue.js';
import type { Logger } from './logger.js';
import type { OpcoRegistry } from './opco-registry.js';
import type { Pipeline } from './pipeline.js';
import type { MetricsWindow, PrometheusMetrics } from './metrics.js';
import type { DomainEvent } from './events.js';
import type { UpstreamBudget } from './upstream-budget.js';
import type { PluginRoutes } from './plugin-routes.js';

export type ProcessRole = 'serve' | 'api' | 'worker';

/** Resolves a host name to all its addresses; the kernel's default is the system resolver. */
export type HostResolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export interface PluginApi {
  config: ResolvedConfig;
  role: ProcessRole;
  log: Logger;
  store: Store;
  queue: Queue;
  hooks: Pick<Hooks, 'add'>;
  /** Routes of the plugin; literal paths are mounted before `/:opcoId/...` ones. */
  router: PluginRoutes;
  opcos: OpcoRegistry;
  pipeline: Pipeline;
  budget: UpstreamBudget;
  window: MetricsWindow;
  prometheus: PrometheusMetrics;
  /** Emits a domain event; an `id` derived from its cause makes a re-emitted event the same one. */
  emit(event: Omit<DomainEvent, 'id' | 'timestamp'> & { id?: string }): Promise<void>;
  resolveHost: HostResolver;
}

export interface Plugin {
  name: string;
  dependencies?: string[];
  register(api: PluginApi): Promise<void> | void;
}

export function definePlugin(plugin: Plugin): Plugin {
  return plugin;
}

/** Loads the named plugins and orders them so that each comes after its dependencies. */
export async function loadPlugins(names: string[]): Promise<Plugin[]> {
  const loaded = new Map<string, Plugin>();
  for (const [index, name] of names.entries()) {
    const plugin = await loadModule<Plugin>('plugin', name, `plugins[${index}]`);
    if (typeof plugin?.register !== 'function') throw new ConfigError(`invalid configuration: plugins[${index}]: "${name}" is not a plugin`);
    loaded.set(plugin.name, plugin);
  }
  const ordered: Plugin[] = [];
  const visiting = new Set<string>();
  const visit = (plugin: Plugin) => {
    if (ordered.includes(plugin)) return;
    if (visiting.has(plugin.name)) throw new ConfigError(`invalid configuration: plugins: dependency cycle through "${plugin.name}"`);
    visiting.add(plugin.name);
    for (const dependency of plugin.dependencies ?? []) {
      const required = loaded.get(dependency);
      if (!required) throw new ConfigError(`invalid configuration: plugins: "${plugin.name}" needs plugin "${dependency}"`);
      visit(required);
    }
    ordered.push(plugin);
  };
  for (const plugin of loaded.values()) visit(plugin);
  return ordered;
}
