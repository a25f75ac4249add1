// Issue 11, point 4: a worker that is idle between jobs must not poll the store. The real service
// (its job worker, and every periodic task of the default plugins) on the real backends (MongoDB
// wire protocol, FerretDB in CI, and RabbitMQ), every command counted by the driver's command
// monitoring. The clock is frozen: idle time is made by moving it, so each periodic task runs
// exactly when its configured interval has elapsed, and what it sends is counted apart.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { STANDING_SWEEP_MS } from '@opco-proxy/core/limits';
import { TestClock } from '@opco-proxy/core/testing';
import { HISTORY_PURGE_INTERVAL_MS, type ResolvedConfig } from '@opco-proxy/core/application';
import { completeJobs, countedBackends, eventually, realBackendsSkip, startService } from '../src/index.js';
import type { JobsConfig } from '@opco-proxy/plugin-jobs';
import type { WebhooksConfig } from '@opco-proxy/plugin-webhooks';
import type { SyncConfig } from '@opco-proxy/plugin-sync';
import type { CacheConfig } from '@opco-proxy/plugin-cache';

/**
 * Real time the service is left alone, the clock frozen, before the clock is moved: a poll on a
 * timer of its own rather than the kernel's clock (which the code must not have) would ring in it.
 */
const REAL_IDLE_MS = 1500;

/** The default plugins' sections, as each plugin types its own. */
type WithSections = ResolvedConfig & {
  jobs: JobsConfig;
  webhooks: WebhooksConfig;
  sync: SyncConfig;
  cache: CacheConfig;
};

/**
 * The periodic tasks of the default plugins, and what one run of each sends the store when there
 * is nothing to recover, expire or poll: a bounded sweep, the same however many jobs ran before
 * (a read per job, or per job ended, would show here). Each runs once per its configured interval.
 */
const SWEEPS: Array<{ task: string; intervalMs: (config: WithSections) => number; commands: Record<string, number> }> =
  [
    // Jobs stored but never queued, or ended without their event. On FerretDB a search of a few
    // statuses (`status: {$in: [...]}`) goes value by value (drivers/mongodb/src/filter-pushdown.ts).
    { task: 'jobs recovery', intervalMs: (c) => c.jobs.sweepIntervalMs, commands: { 'find jobs': 3 } },
    // Ended jobs past retention, idempotency keys, files and sealed inputs left behind, and the
    // failed jobs whose retry window ended with their inputs kept (one search, P23).
    {
      task: 'jobs expiry',
      intervalMs: (c) => c.jobs.sweepIntervalMs,
      commands: {
        'delete jobs': 1,
        'delete idempotency_keys': 1,
        'delete job_files': 1,
        'find jobs': 1,
        'delete job_secrets': 1,
      },
    },
    // Overdue deliveries: one search per unfinished status (pending, retrying) on FerretDB.
    {
      task: 'webhooks recovery',
      intervalMs: (c) => c.webhooks.sweepIntervalMs,
      commands: { 'find webhook_deliveries': 2 },
    },
    {
      task: 'webhooks expiry',
      intervalMs: (c) => c.webhooks.sweepIntervalMs,
      commands: { 'delete webhook_deliveries': 1 },
    },
    // Discoveries of a sync whose message was lost (running: pending or processing, 2 searches on
    // FerretDB), then the syncs fetching whose batches may have lost theirs (1).
    { task: 'sync recovery', intervalMs: (c) => c.sync.sweepIntervalMs, commands: { 'find syncs': 3 } },
    // The pollers' tick with no poller: a claim of a due poll, which finds none, and the next due
    // date, none, so it waits its longest, the sync sweep interval (it would wait until a due poll).
    // Audit records past their retention (D32).
    { task: 'audit purge', intervalMs: (c) => c.audit.sweepIntervalMs, commands: { 'delete audit': 1 } },
    // Standings of tenant keys past their lifetime (P13).
    { task: 'tenant standing expiry', intervalMs: () => STANDING_SWEEP_MS, commands: { 'delete tenant_standing': 1 } },
    // Asks of client reads for budget past their two windows (issue 38, budget-share.ts).
    { task: 'budget asks expiry', intervalMs: () => STANDING_SWEEP_MS, commands: { 'delete upstream_budget_asks': 1 } },
    {
      task: 'sync polls',
      intervalMs: (c) => c.sync.sweepIntervalMs,
      commands: { 'findAndModify pollers': 1, 'find pollers': 1 },
    },
    { task: 'cache sweep', intervalMs: (c) => c.cache.sweepIntervalMs, commands: { 'delete cache': 1 } },
    // Minutes of history past their retention (issue 42), hourly.
    { task: 'history purge', intervalMs: () => HISTORY_PURGE_INTERVAL_MS, commands: { 'delete history': 1 } },
  ];

const skip = realBackendsSkip();
if (skip) t.test('an idle worker and the store', { skip }, async () => {});
else {
  t.test('an idle worker sends the store nothing; the sweeps run once per configured interval', async (t) => {
    const backends = await countedBackends('idle', { atomicity: 'server' });
    t.teardown(() => backends.close());
    const clock = new TestClock({ frozen: true });
    // The history's recorder writes the minute the jobs were counted in (one write, issue 42;
    // core/test/history.test.ts): off here, where an idle instance must send nothing.
    const service = await startService({
      store: backends.store,
      queue: backends.queue,
      clock,
      config: { history: { enabled: false } },
    });
    t.teardown(() => service.close());
    const intervals = periodicIntervals(service.kernel.config as WithSections);

    for (const [round, jobs] of [
      [1, 3],
      [2, 6],
    ] as const) {
      await completeJobs(service, backends, jobs);
      // Between jobs, nothing but the periodic tasks waits on the clock (a worker's poll would).
      t.equal(
        clock.pending(),
        SWEEPS.length,
        `round ${round}, after ${jobs} jobs: only the ${SWEEPS.length} periodic tasks wait on the clock`,
      );

      backends.counts.reset();
      await sleep(REAL_IDLE_MS);
      await idleFor(clock, intervals.tick - 1, intervals.tick - 1);
      t.same(
        backends.counts.snapshot().commands,
        {},
        `round ${round}: no store command while idle, in real time and for ${intervals.tick - 1} ms on the clock`,
      );

      backends.counts.reset();
      await idleFor(clock, intervals.longest, intervals.tick);
      const expected = sweepsIn(intervals.longest, service.kernel.config as WithSections);
      t.same(
        backends.counts.snapshot().commands,
        expected,
        `round ${round}: in ${intervals.longest} ms idle, each sweep ran once per interval: ${JSON.stringify(expected)}`,
      );
    }
  });
}

/** The store commands of the sweeps due in `windowMs`: each task's commands times its runs. */
function sweepsIn(windowMs: number, config: WithSections): Record<string, number> {
  const total: Record<string, number> = {};
  for (const { intervalMs, commands } of SWEEPS) {
    const runs = Math.floor(windowMs / intervalMs(config));
    for (const [command, n] of Object.entries(commands)) total[command] = (total[command] ?? 0) + runs * n;
  }
  return Object.fromEntries(Object.entries(total).sort());
}

/**
 * The finest step of the periodic tasks' clock (the pollers' shortest wait, and the delay of their
 * first look after start: below it, an idle service has nothing to do) and the longest interval
 * (a window of that length sees every task run).
 */
function periodicIntervals(config: WithSections): { tick: number; longest: number } {
  const all = SWEEPS.map(({ intervalMs }) => intervalMs(config));
  return { tick: config.sync.pollTickMs, longest: Math.max(...all) };
}

/**
 * Moves the clock `ms` forward in steps of `stepMs` (a periodic task runs at most once per
 * advance: it is scheduled again when its run ends), each step waiting until every task that rang
 * has ended its run and waits for its next timer again, as many timers as before the step: the
 * count is then complete.
 */
async function idleFor(clock: TestClock, ms: number, stepMs: number): Promise<void> {
  const waiting = clock.pending();
  for (let moved = 0; moved < ms; moved += stepMs) {
    await clock.advance(Math.min(stepMs, ms - moved));
    await eventually(
      () => clock.pending() === waiting,
      () => `every periodic task waiting again (${clock.pending()} timers, ${waiting} before)`,
      20_000,
    );
  }
}
