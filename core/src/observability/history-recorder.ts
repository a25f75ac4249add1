/**
 * Issue 42: every instance's counts, minute by minute, in the store (collection `history`), so
 * that operators see what the service did over days whichever instance did it.
 *
 * The request path pays nothing for it: the Prometheus counters it reads are incremented there
 * already. Once a minute, on the kernel's clock and at the minute's boundary, the recorder reads
 * the metrics of `HISTORY_SOURCES` from the kernel's registry, takes each counter's growth since
 * its previous reading and each gauge as it is, and writes one document for that minute and this
 * instance: at most one store write per instance per minute, none for a minute that counted
 * nothing. The minute in progress is written when the kernel closes, so a restart loses nothing.
 */
import type { Registry } from 'prom-client';
import { settlesBy, type Clock } from '../clock.js';
import { randomHex } from '../crypto/crypto.js';
import { PeriodicTask } from '../durable/periodic-task.js';
import type { Logger } from './logger.js';
import {
  DAY_MS,
  MINUTE_MS,
  minuteOf,
  type HistoryDoc,
  type HistoryLog,
  type HistoryPoint,
  type HistorySeries,
} from './history-log.js';

type SampleLabels = Partial<Record<string, string | number>>;

interface HistorySource {
  metric: string;
  series: HistorySeries;
  /** A gauge is read as it is; a counter by its growth since the previous reading. */
  gauge?: true;
  /** The labels of the points one sample counts in: none to leave it out, two for a 429 answered. */
  points(labels: SampleLabels): Array<Record<string, string>>;
}

/**
 * Where each series comes from. A metric not in the registry (its plugin not loaded, or a role
 * that does not count it) is skipped: the kernel names plugins' metrics, it imports no plugin.
 */
export const HISTORY_SOURCES: readonly HistorySource[] = [
  {
    series: 'requests',
    metric: 'opco_proxy_http_requests_total',
    points: ({ status }) => {
      const code = Number(status);
      if (!(code >= 200 && code <= 599)) return [];
      const statusClass = { class: `${Math.floor(code / 100)}xx` };
      return code === 429 ? [statusClass, { class: '429' }] : [statusClass];
    },
  },
  {
    series: 'upstream',
    metric: 'opco_proxy_upstream_calls_total',
    points: ({ opco, status }) => {
      const outcome = upstreamOutcome(String(status));
      return opco === undefined || !outcome ? [] : [{ opcoId: String(opco), outcome }];
    },
  },
  {
    series: 'budget',
    metric: 'opco_proxy_budget_calls_total',
    // Proven and unproven tenants' calls alike: the budget is one.
    points: ({ opco }) => (opco === undefined ? [] : [{ opcoId: String(opco) }]),
  },
  {
    series: 'jobs',
    metric: 'opco_proxy_jobs_submitted_total',
    points: ({ opco }) => (opco === undefined ? [] : [{ opcoId: String(opco), outcome: 'submitted' }]),
  },
  {
    series: 'jobs',
    metric: 'opco_proxy_jobs_ended_total',
    points: ({ opco, status }) =>
      opco !== undefined && (status === 'completed' || status === 'failed')
        ? [{ opcoId: String(opco), outcome: status }]
        : [],
  },
  {
    series: 'deliveries',
    metric: 'opco_proxy_webhook_attempts_total',
    points: ({ outcome }) =>
      outcome === 'delivered' || outcome === 'retrying' || outcome === 'failed' ? [{ outcome }] : [],
  },
  {
    series: 'queues',
    metric: 'opco_proxy_queue_depth',
    gauge: true,
    points: ({ queue, state }) => (queue !== undefined && state === 'ready' ? [{ queue: String(queue) }] : []),
  },
];

/** The upstream calls counter's `status` (pipeline.ts): a status answered, or `timeout` / `network`. */
function upstreamOutcome(status: string): string | undefined {
  if (status === 'timeout' || status === 'network') return status;
  const code = Number(status);
  if (code === 429) return '429';
  if (code >= 200 && code <= 299) return '2xx';
  if (code >= 400 && code <= 499) return '4xx';
  if (code >= 500 && code <= 599) return '5xx';
  // 0: neither an answer nor an error, which only a call that never left can be.
  return code === 0 ? 'network' : undefined;
}

/** A gauge's `collect()` asks a backend (the queue): a minute's reading waits for it this long at most. */
const GAUGE_WAIT_MS = 2_000;
/** Minutes kept in memory while the store refuses them, written with the next minute's. */
const MAX_UNWRITTEN = 60;

export interface HistoryRecorderDeps {
  registry: Registry;
  history: HistoryLog;
  clock: Clock;
  log: Logger;
  retentionDays: number;
  /** Names this process's documents; random by default, so that a restarted instance is a new one. */
  instance?: string;
}

export class HistoryRecorder {
  readonly instance: string;
  /** Each counter sample's value at the previous reading, by metric and labels. */
  private readonly previous = new Map<string, number>();
  /** Start of the minute whose counts are being gathered. */
  private minute: number;
  /** Minutes the store refused, written again with the next one (in one write). */
  private unwritten: HistoryDoc[] = [];
  private task: PeriodicTask | undefined;

  constructor(private readonly deps: HistoryRecorderDeps) {
    this.instance = deps.instance ?? randomHex(8);
    // Counters start at 0 with the process: what they count before the first minute is its.
    this.minute = minuteOf(deps.clock.now());
  }

  /** Records at each minute's boundary from now on (every role: each counts what it does). */
  start(): void {
    const { clock, log } = this.deps;
    this.task ??= new PeriodicTask(
      'history:record',
      untilNextMinute(clock.now()),
      async () => {
        await this.record(false);
        return { nextRunInMs: untilNextMinute(clock.now()) };
      },
      clock,
      (err) => log.warn({ err }, 'history: the minute could not be read'),
    );
    this.task.start();
  }

  /** Stops recording and writes the minute in progress (the kernel's close: the counts of a restart are kept). */
  async stop(): Promise<void> {
    await this.task?.stop();
    await this.record(true);
  }

  /**
   * Reads the sources and writes the minute being gathered once it has ended (or at once when
   * `final`). A timer that rings early finds the same minute and waits for the boundary; one that
   * rings late (a process held up) counts what came meanwhile in the minute it had begun.
   */
  async record(final: boolean): Promise<void> {
    const now = this.deps.clock.now();
    if (!final && minuteOf(now) <= this.minute) return;
    const points = await this.read();
    const minute = this.minute;
    this.minute = minuteOf(now);
    if (points.length > 0) {
      this.unwritten.push({
        _id: `${minute}:${this.instance}`,
        minute: new Date(minute),
        instance: this.instance,
        expiresAt: new Date(minute + this.deps.retentionDays * DAY_MS),
        points,
      });
    }
    await this.write();
  }

  /** Every source's points of the minute: counters' growth, gauges' values; zeros left out. */
  private async read(): Promise<HistoryPoint[]> {
    const points = new Map<string, HistoryPoint>();
    for (const source of HISTORY_SOURCES) {
      const samples = await this.samples(source);
      for (const { labels, value } of samples) {
        let amount = value;
        if (!source.gauge) {
          const key = `${source.metric}${JSON.stringify(labels)}`;
          const before = this.previous.get(key) ?? 0;
          this.previous.set(key, value);
          // A counter that went down was reset: all it holds is new.
          amount = value >= before ? value - before : value;
        }
        if (amount === 0) continue;
        for (const pointLabels of source.points(labels)) {
          const key = `${source.series}${JSON.stringify(pointLabels)}`;
          const point = points.get(key);
          if (point) point.value += amount;
          else points.set(key, { series: source.series, labels: pointLabels, value: amount });
        }
      }
    }
    return [...points.values()];
  }

  private async samples({ metric, gauge }: HistorySource): Promise<Array<{ labels: SampleLabels; value: number }>> {
    const found = this.deps.registry.getSingleMetric(metric);
    if (!found) return [];
    if (!gauge) return (await found.get()).values;
    // A gauge's collect() asks a backend, which may hang: the minute goes on without it.
    let values: Array<{ labels: SampleLabels; value: number }> = [];
    const reading = Promise.resolve(found.get()).then((read) => void (values = read.values));
    const { clock } = this.deps;
    if (!(await settlesBy(clock, clock.now() + GAUGE_WAIT_MS, reading))) return [];
    return values;
  }

  /** One write for every minute not yet in the store; kept for the next when the store fails. */
  private async write(): Promise<void> {
    if (this.unwritten.length === 0) return;
    const batch = this.unwritten;
    try {
      await this.deps.history.write(batch);
      this.unwritten = [];
    } catch (err) {
      const dropped = Math.max(0, batch.length - MAX_UNWRITTEN);
      this.unwritten = batch.slice(dropped);
      this.deps.log.warn(
        { err, minutes: this.unwritten.length, dropped },
        'history: the store refused the minute; it is written with the next one',
      );
    }
  }
}

function untilNextMinute(now: number): number {
  return minuteOf(now) + MINUTE_MS - now;
}
