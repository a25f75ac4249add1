// The plugin host (plugin.ts loadPlugins, plugin-host.ts PluginHost): plugins in dependency
// order, a missing dependency, a cycle or a package that is no plugin refused with a stable code,
// and the API a plugin gets naming it in the errors its misuse causes.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import {
  ConfigError,
  Hooks,
  TestClock,
  SeamRegistry,
  createLogger,
  isKernelError,
  loadPlugins,
  pluginMetrics,
  systemClock,
  type AdmissionProvider,
  type Plugin,
  type ResolvedConfig,
} from '../src/application.js';
import { PluginHost, type PluginHostDeps } from '../src/host/plugin-host.js';
import { OperationRouter, type OperationRouterOptions } from '../src/http/operation-router.js';

const plugin = (name: string, dependencies?: string[]): Plugin => ({ name, dependencies, register: () => undefined });

t.test('plugins come after their dependencies, whatever the order they are named in', async (t) => {
  const ordered = await loadPlugins(
    [],
    [plugin('webhooks', ['jobs']), plugin('sync', ['jobs', 'webhooks']), plugin('jobs'), plugin('cache')],
  );
  const names = ordered.map((p) => p.name);
  t.same(names.sort(), ['cache', 'jobs', 'sync', 'webhooks'], 'each once');
  const at = (name: string) => ordered.findIndex((p) => p.name === name);
  t.ok(at('jobs') < at('webhooks') && at('webhooks') < at('sync') && at('jobs') < at('sync'));
});

t.test('a missing dependency or a cycle is a configuration error with its code', async (t) => {
  await t.rejects(loadPlugins([], [plugin('sync', ['jobs'])]), {
    code: 'OPCO_ERR_PLUGIN_DEPENDENCY_MISSING',
    message: 'invalid configuration: plugins: "sync" needs plugin "jobs"',
  });
  const cycle = await loadPlugins([], [plugin('a', ['b']), plugin('b', ['a'])]).catch((err: unknown) => err);
  t.ok(cycle instanceof ConfigError, 'printed without a stack');
  t.ok(isKernelError(cycle, 'OPCO_ERR_PLUGIN_DEPENDENCY_CYCLE'));
  t.match((cycle as Error).message, /dependency cycle through "a"/);
});

t.test('a package that is not installed, or is no plugin, is named with its key', async (t) => {
  await t.rejects(loadPlugins(['no-such-thing']), {
    code: 'OPCO_ERR_PACKAGE_MISSING',
    message:
      'invalid configuration: plugins[0]: plugin package "@opco-proxy/plugin-no-such-thing" is not installed (looked in the service\'s own installation)',
  });
  await t.rejects(loadPlugins(['@opco-proxy/schemas']), {
    code: 'OPCO_ERR_PLUGIN_INVALID',
    message: 'invalid configuration: plugins[0]: "@opco-proxy/schemas" is not a plugin',
  });
});

/** A host with real registries; what these tests never touch (store, queue, pipeline...) is left out. */
function host(over: Partial<Record<keyof PluginHostDeps, unknown>> = {}): {
  host: PluginHost;
  hooks: Hooks;
  seams: SeamRegistry;
  router: OperationRouter;
} {
  const hooks = new Hooks();
  const seams = new SeamRegistry();
  const router = new OperationRouter({} as OperationRouterOptions);
  const config = {
    masterKey: randomBytes(32),
    mode: 'development',
    limits: { bodyBytes: 1024, fileBytes: 1024 },
    env: {},
  } as unknown as ResolvedConfig;
  const deps = {
    config,
    role: 'api',
    log: createLogger({ level: 'silent' }),
    clock: systemClock,
    hooks,
    seams,
    router,
    queueNames: new Set<string>(),
    ...over,
  };
  return { host: new PluginHost(deps as unknown as PluginHostDeps), hooks, seams, router };
}

const budget = (name: string): AdmissionProvider => ({
  name,
  admit: async () => ({ headers: {}, release: () => undefined }),
});

t.test('through the API, a second provider of a seam is refused naming both plugins', async (t) => {
  const { host: h, seams } = host();
  const registry = new Registry();
  const first = apiOf(h, 'first', registry);
  first.provide('admission', budget('first-budget'));
  t.throws(() => apiOf(h, 'second', registry).provide('admission', budget('second-budget')), {
    code: 'OPCO_ERR_SEAM_TWO_PROVIDERS',
    message:
      'admission has two providers: "first-budget" from plugin first and "second-budget" from plugin second; enable only one',
  });
  t.equal(seams.get('admission').name, 'first-budget');
});

t.test('through the API: unknown hooks, operations mounted twice, badly named metrics', async (t) => {
  const { host: h, hooks, router } = host();
  const registry = new Registry();
  const api = apiOf(h, 'cache', registry);
  t.throws(() => api.addHook('onResponse' as never, (() => undefined) as never), { code: 'OPCO_ERR_HOOK_UNKNOWN' });
  api.addHook('lookup', () => undefined);
  t.equal(hooks.count('lookup'), 1);
  api.route('getHealth', () => ({ status: 200, body: { status: 'ok' } }));
  t.throws(() => apiOf(h, 'other', registry).route('getHealth', () => ({ status: 200, body: { status: 'ok' } })), {
    code: 'OPCO_ERR_ROUTE_TWICE',
    message: 'operation getHealth is mounted twice: by plugin cache and by plugin other',
  });
  t.throws(() => api.route('getEverything' as never, (() => undefined) as never), { code: 'OPCO_ERR_ROUTE_UNKNOWN' });
  t.same(router.ids(), ['getHealth']);
  t.throws(() => api.metrics.counter({ name: 'cache_hits', help: 'x' }), {
    code: 'OPCO_ERR_METRIC_NAME',
    message: 'plugin cache: metric cache_hits must be named opco_proxy_*',
  });
  router.middleware();
  t.throws(() => api.route('getHealth', () => ({ status: 200, body: { status: 'ok' } })), {
    code: 'OPCO_ERR_ROUTES_FROZEN',
  });
});

function apiOf(h: PluginHost, name: string, registry: Registry) {
  return h.apiFor(name, pluginMetrics(registry, name, systemClock));
}

t.test(
  "with a queue that keeps nothing, work is restored at start and again once a dead holder's lease has lapsed",
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const { host: h } = host({ role: 'serve', clock, queue: { durable: false } });
    const api = h.apiFor('jobs', pluginMetrics(new Registry(), 'jobs', clock));
    const restored: Date[] = [];
    api.recover({
      name: 'jobs',
      intervalMs: 60_000,
      graceMs: 60_000,
      leaseMs: 2500,
      requeue: async (dueBefore) => void restored.push(dueBefore),
    });
    await h.start();
    t.equal(restored.length, 1, 'restored at start');
    await clock.advance(2500);
    t.equal(restored.length, 1, 'not before the lease could lapse');
    await clock.advance(100);
    t.equal(restored.length, 2, 'restored again past the longest lease');
    t.ok(
      restored.every((d) => d.getTime() > clock.now() + 1e12),
      'every record, however far its due date',
    );
    await h.stop();
    t.equal(clock.pending(), 0, 'nothing left scheduled');
  },
);

t.test('with a durable queue, nothing is restored at start: the sweep alone finds lost messages', async (t) => {
  const clock = new TestClock({ frozen: true });
  const { host: h } = host({ role: 'serve', clock, queue: { durable: true } });
  const restored: Date[] = [];
  h.apiFor('jobs', pluginMetrics(new Registry(), 'jobs', clock)).recover({
    name: 'jobs',
    intervalMs: 60_000,
    graceMs: 1000,
    leaseMs: 2500,
    requeue: async (dueBefore) => void restored.push(dueBefore),
  });
  await h.start();
  await clock.advance(2600);
  t.same(restored, []);
  await clock.advance(60_000);
  t.equal(restored.length, 1, 'the sweep ran');
  t.equal(restored[0].getTime(), clock.now() - 1000, 'for what is due past the grace');
  await h.stop();
});
