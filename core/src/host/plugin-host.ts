/**
 * What the kernel gives each plugin (plugin.ts PluginApi), and the background tasks plugins ask
 * for: periodic tasks and the recovery of durable work, started once the kernel is ready in
 * roles that run workers, stopped when it closes. With a queue that does not outlive the process
 * (embedded), recovery first queues again every unfinished record: that is the one place the
 * "restore after start" rule lives.
 */
import { createSealer } from '../crypto/crypto.js';
import { PeriodicTask } from '../durable/periodic-task.js';
import type { ResolvedConfig } from '../config/config.js';
import type { Clock, Timer } from '../clock.js';
import type { Hooks } from './hooks.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsWindow, PluginMetrics } from '../observability/metrics.js';
import type { OpcoDirectory } from '../profile/opco-directory.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { HeldWork } from '../limits/held-work.js';
import type { PluginApi, ProcessRole, RecoverySpec } from '../plugin.js';
import type { HostResolver } from '../http/host-resolver.js';
import type { Queue } from '../ports/queue.js';
import type { Store } from '../ports/store.js';
import type { SeamRegistry } from './seams.js';
import type { OperationRouter } from '../http/operation-router.js';
import type { Registry } from 'prom-client';

export type Emit = PluginApi['emit'];

/** The latest date there is: a queue that keeps nothing lost every message, due or scheduled. */
const END_OF_TIME = new Date(8.64e15);

export interface PluginHostDeps {
  config: ResolvedConfig;
  role: ProcessRole;
  log: Logger;
  clock: Clock;
  store: Store;
  queue: Queue;
  hooks: Hooks;
  seams: SeamRegistry;
  router: OperationRouter;
  opcos: OpcoDirectory;
  pipeline: Pipeline;
  window: MetricsWindow;
  registry: Registry;
  emit: Emit;
  resolveHost: HostResolver;
  heldWork: HeldWork;
  /** The work queues plugins declared, in order. */
  queueNames: Set<string>;
}

export class PluginHost {
  private readonly tasks: PeriodicTask[] = [];
  private readonly recoveries: Array<{ spec: RecoverySpec; log: Logger }> = [];
  /** Second restorations (non-durable queue) not yet run, and those running. */
  private readonly restoreTimers: Timer[] = [];
  private readonly restoring: Promise<unknown>[] = [];
  private readonly sealer;

  constructor(private readonly deps: PluginHostDeps) {
    this.sealer = createSealer(deps.config.masterKey);
  }

  apiFor(name: string, metrics: PluginMetrics): PluginApi<unknown> {
    const {
      config,
      role,
      clock,
      store,
      queue,
      hooks,
      seams,
      router,
      opcos,
      pipeline,
      window,
      emit,
      resolveHost,
      heldWork,
    } = this.deps;
    const log = this.deps.log.child({ plugin: name });
    const runsWorkers = role !== 'api';
    return {
      name,
      role,
      mode: config.mode,
      config: (config as unknown as Record<string, unknown>)[name] ?? {},
      limits: config.limits,
      log,
      clock,
      store,
      queue,
      sealer: this.sealer,
      opcos,
      pipeline,
      window,
      metrics,
      registry: this.deps.registry,
      env: config.env,
      resolveHost,
      heldWork,
      addHook: (hook, handler) => hooks.add(hook, handler),
      provide: (seam, provider) => seams.provide(seam, provider, `plugin ${name}`),
      declareQueue: (queueName) => void this.deps.queueNames.add(queueName),
      route: (operation, handler) => router.mount(operation, handler, `plugin ${name}`),
      emit,
      every: (task, intervalMs, run) => {
        if (!runsWorkers) return { wake: () => undefined };
        const periodic = new PeriodicTask(`${name}:${task}`, intervalMs, run, clock, (err) =>
          log.warn({ err, task }, 'periodic task failed'),
        );
        this.tasks.push(periodic);
        return { wake: () => periodic.wake() };
      },
      recover: (spec) => {
        if (runsWorkers) this.recoveries.push({ spec, log });
      },
    };
  }

  /** A periodic task of the kernel itself, run like a plugin's (workers only). */
  addTask(name: string, intervalMs: number, run: () => Promise<unknown>): void {
    if (this.deps.role === 'api') return;
    this.tasks.push(
      new PeriodicTask(name, intervalMs, run, this.deps.clock, (err) =>
        this.deps.log.warn({ err, task: name }, 'periodic task failed'),
      ),
    );
  }

  /** After the plugins' ready hooks: restore lost work (non-durable queue), then start the tasks. */
  async start(): Promise<void> {
    for (const { spec, log } of this.recoveries) {
      if (!this.deps.queue.durable) {
        const restore = () =>
          spec.requeue(END_OF_TIME).catch((err) => log.warn({ err, work: spec.name }, 'restoring work failed'));
        await restore();
        // A restored message that finds its record held is a duplicate: it is dropped, and the
        // record would wait for the sweep's grace. Past the longest lease, nothing is held by the dead.
        if (spec.leaseMs !== undefined)
          this.restoreTimers.push(
            this.deps.clock.setTimeout(() => void this.restoring.push(restore()), spec.leaseMs + 100),
          );
      }
      const sweep = () => spec.requeue(new Date(this.deps.clock.now() - spec.graceMs));
      this.tasks.push(
        new PeriodicTask(`recover:${spec.name}`, spec.intervalMs, sweep, this.deps.clock, (err) =>
          log.warn({ err, work: spec.name }, 'recovery sweep failed'),
        ),
      );
    }
    for (const task of this.tasks) task.start();
  }

  async stop(): Promise<void> {
    for (const timer of this.restoreTimers) timer.cancel();
    await Promise.all([...this.tasks.map((task) => task.stop()), ...this.restoring]);
  }
}
