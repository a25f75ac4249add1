/**
 * The `history` collection (issue 42): one document per instance and minute, written by that
 * instance's recorder (history-recorder.ts), read across instances by GET /admin/history
 * (history-reader.ts), purged past `history.retentionDays` by the kernel's periodic task.
 */
import type { Clock } from '../clock.js';
import type { Collection, Store } from '../ports/store.js';

export const HISTORY_COLLECTION = 'history';
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** How often the kernel deletes the minutes past `history.retentionDays`. */
export const HISTORY_PURGE_INTERVAL_MS = 3_600_000;

export const HISTORY_SERIES = ['requests', 'upstream', 'budget', 'jobs', 'deliveries', 'queues'] as const;
export type HistorySeries = (typeof HISTORY_SERIES)[number];

export interface HistoryPoint {
  series: HistorySeries;
  labels: Record<string, string>;
  value: number;
}

/** One instance's minute. Browser tests seed this very shape: change it with them. */
export interface HistoryDoc {
  /** `${minute.getTime()}:${instance}`: the time first, so ids sort as minutes do. */
  _id: string;
  /** Start of the minute, UTC. */
  minute: Date;
  instance: string;
  /** The minute plus the retention: what the purge deletes by. */
  expiresAt: Date;
  /** Counts that grew in the minute, and the gauges that were not 0 at its end. */
  points: HistoryPoint[];
}

export class HistoryLog {
  private readonly minutes: Collection<HistoryDoc>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.minutes = store.collection<HistoryDoc>(HISTORY_COLLECTION);
  }

  /** The index that bounds every read to its range of minutes. */
  async prepare(): Promise<void> {
    await this.minutes.createIndex({ minute: 1 });
  }

  /**
   * One store write for every minute given. A minute written by an earlier attempt whose answer
   * was lost comes back as a duplicate, and is done.
   */
  async write(docs: HistoryDoc[]): Promise<void> {
    if (docs.length > 0) await this.minutes.insertMany(docs);
  }

  /** The minutes of `[since, until)` after the `_id` `after`, in `_id` order (the minute first). */
  page(since: Date, until: Date, after: string | undefined, limit: number): Promise<HistoryDoc[]> {
    const minute = { $gte: since, $lt: until };
    const filter = after === undefined ? { minute } : { minute, _id: { $gt: after } };
    return this.minutes.find(filter, { sort: { _id: 1 }, limit });
  }

  /** Deletes the minutes past their retention, whether this process records or not. */
  purge(): Promise<number> {
    return this.minutes.sweepExpired(this.clock.date());
  }
}

export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}
