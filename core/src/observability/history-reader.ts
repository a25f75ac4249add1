/**
 * GET /admin/history (issue 42): the minutes every instance wrote (history-recorder.ts), summed
 * across instances into points of `step` seconds. Counts are summed over a point's minutes and
 * instances; queue depths take the largest seen. A point no instance wrote a minute of is null,
 * which tells "nothing counted" (0) from "nobody was counting" (null).
 */
import type { AdminHistory, AdminHistoryQuery } from '@opco-proxy/schemas';
import type { Clock } from '../clock.js';
import { createError } from '../errors/errors.js';
import {
  DAY_MS,
  HISTORY_PURGE_INTERVAL_MS,
  HISTORY_SERIES,
  MINUTE_MS,
  minuteOf,
  type HistoryDoc,
  type HistoryLog,
  type HistorySeries,
} from './history-log.js';

/** The default range, and the points a default step stays within. */
const DEFAULT_RANGE_MS = 3_600_000;
const DEFAULT_POINTS = 720;
/** The most points an answer holds, whatever step is asked. */
export const MAX_HISTORY_POINTS = 10_000;
/** Minutes read per round trip, in `_id` order: what one read holds in memory, whatever the range. */
const PAGE_SIZE = 1_000;

export interface RateLimits {
  list(): Array<{ id: string; rateLimit: { limit: number; windowMs: number } }>;
}

export interface HistoryReaderDeps {
  history: HistoryLog;
  clock: Clock;
  retentionDays: number;
  /** The configured opcoIds and their rate limits (the OpcoDirectory). */
  opcos: RateLimits;
}

interface Range {
  since: number;
  until: number;
  stepMs: number;
  series: ReadonlySet<HistorySeries>;
}

interface Line {
  name: HistorySeries;
  labels: Record<string, string>;
  values: Array<number | null>;
}

export class HistoryReader {
  constructor(private readonly deps: HistoryReaderDeps) {}

  async answer(query: AdminHistoryQuery): Promise<AdminHistory> {
    const range = this.range(query);
    const points = Math.ceil((range.until - range.since) / range.stepMs);
    const reported = new Array<boolean>(points).fill(false);
    const lines = new Map<string, Line>();
    for await (const doc of this.documents(range)) {
      const index = Math.floor((doc.minute.getTime() - range.since) / range.stepMs);
      reported[index] = true;
      for (const { series, labels, value } of doc.points) {
        if (!range.series.has(series)) continue;
        const key = `${series}${JSON.stringify(sortedLabels(labels))}`;
        let line = lines.get(key);
        if (!line) {
          line = { name: series, labels: sortedLabels(labels), values: new Array<number | null>(points).fill(null) };
          lines.set(key, line);
        }
        const before = line.values[index] ?? 0;
        // A depth is a level, not a count: the highest any instance saw in the point.
        line.values[index] = series === 'queues' ? Math.max(before, value) : before + value;
      }
    }
    const series = [...lines.values()].sort(byNameThenLabels);
    for (const line of series) line.values = line.values.map((value, i) => (reported[i] ? (value ?? 0) : null));
    return {
      since: new Date(range.since).toISOString(),
      until: new Date(range.until).toISOString(),
      stepSeconds: range.stepMs / 1000,
      times: Array.from({ length: points }, (_, i) => new Date(range.since + i * range.stepMs).toISOString()),
      series,
      limits: this.deps.opcos.list().map(({ id, rateLimit }) => ({
        opcoId: id,
        perStep: (rateLimit.limit * range.stepMs) / rateLimit.windowMs,
      })),
    };
  }

  /** The query checked: a 400 VALIDATION_ERROR names what is wrong, never a 500. */
  private range(query: AdminHistoryQuery): Range {
    const now = this.deps.clock.now();
    const errors: string[] = [];
    const until = query.until !== undefined ? Date.parse(query.until) : now;
    const asked = query.since !== undefined ? Date.parse(query.since) : Math.min(now, until) - DEFAULT_RANGE_MS;
    if (Number.isNaN(until)) errors.push('until: not a date');
    if (Number.isNaN(asked)) errors.push('since: not a date');
    if (errors.length > 0) throw invalid(errors);
    const since = minuteOf(asked);
    // An hour of slack, the purge's interval: "the last 7 days" asked by a client a moment ago
    // (or by a clock a little ahead) is not refused.
    const oldest = now - this.deps.retentionDays * DAY_MS - HISTORY_PURGE_INTERVAL_MS;
    if (asked < oldest)
      errors.push(`since: older than the history's retention (${this.deps.retentionDays} days: ${iso(oldest)})`);
    if (!(since < until)) errors.push('since: must be before until');
    let stepMs = Math.max(MINUTE_MS, Math.ceil((until - since) / DEFAULT_POINTS / MINUTE_MS) * MINUTE_MS);
    if (query.step !== undefined) {
      stepMs = Number(query.step) * 1000;
      if (stepMs % MINUTE_MS !== 0) errors.push('step: must be a multiple of 60 seconds');
    }
    if (errors.length === 0 && (until - since) / stepMs > MAX_HISTORY_POINTS)
      errors.push(`step: the range would take more than ${MAX_HISTORY_POINTS} points; ask for a longer step`);
    if (errors.length > 0) throw invalid(errors);
    const names = query.series?.split(',') ?? HISTORY_SERIES;
    return { since, until, stepMs, series: new Set(names as HistorySeries[]) };
  }

  /** The range's minutes a page at a time, in `_id` order (the minute first): memory stays bounded. */
  private async *documents(range: Range): AsyncGenerator<HistoryDoc> {
    const [since, until] = [new Date(range.since), new Date(range.until)];
    for (let after: string | undefined; ;) {
      const page = await this.deps.history.page(since, until, after, PAGE_SIZE);
      yield* page;
      if (page.length < PAGE_SIZE) return;
      after = page[page.length - 1]._id;
    }
  }
}

function sortedLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function byNameThenLabels(a: Line, b: Line): number {
  const order = HISTORY_SERIES.indexOf(a.name) - HISTORY_SERIES.indexOf(b.name);
  if (order !== 0) return order;
  const [x, y] = [JSON.stringify(a.labels), JSON.stringify(b.labels)];
  return x < y ? -1 : x > y ? 1 : 0;
}

function invalid(errors: string[]): Error {
  return createError('VALIDATION_ERROR', 'invalid query parameters', { errors });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
