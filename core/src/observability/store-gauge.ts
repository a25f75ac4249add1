/**
 * An age gauge read from the store: how old the oldest unfinished job is, how long the most
 * overdue delivery has waited. Finding that record costs what the backlog is long on some
 * backends: FerretDB v1 pushes no sort down to PostgreSQL, so the oldest of 4,500 pending jobs
 * means decoding all of them, over half a second of its CPU (bench/RESULTS.md, 2026-11-26). Read
 * at every scrape, or once a second, the metric would take the store's time from the very work
 * it measures, and the more so the further behind that work is.
 *
 * So scrapes share one read, and the next read starts no sooner than `COST_FACTOR` times as long
 * as the last one took (at least `MIN_EVERY_MS`, at most `MAX_EVERY_MS`): the gauge takes about a
 * twentieth of the store's time at most, whatever the scrape rate and the backlog, and a cheap
 * read (an index seek on MongoDB) is still made every second. The read gives a moment, and the
 * age is counted from it at each scrape, so it keeps growing between reads. A scrape waits for a
 * read `WAIT_MS` at most, then answers with the last value: a hung store must not hang /metrics.
 * A read that never ends is given up after `MAX_EVERY_MS` and another one sent.
 */
import { settlesBy, type Clock } from '../clock.js';

export const STORE_GAUGE = {
  MIN_EVERY_MS: 1000,
  MAX_EVERY_MS: 60_000,
  COST_FACTOR: 20,
  WAIT_MS: 2000,
} as const;

export interface AgeGaugeConfiguration {
  name: string;
  help: string;
  /** The moment the age is counted from; null when nothing waits (age 0). */
  since: () => Promise<Date | null>;
}

interface Read {
  /** When the next read may start: moved once this one has ended, by what it cost. */
  nextAt: number;
  /** The moment read; undefined when the read failed. */
  since: Promise<Date | null | undefined>;
}

/** The age to set at each scrape, with the sharing and the bounds above. */
export class StoreAge {
  private current: Read | undefined;
  private last: Date | null | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly read: () => Promise<Date | null>,
  ) {}

  /** Seconds; undefined before any read has answered (the gauge keeps its value). */
  async seconds(): Promise<number | undefined> {
    const now = this.clock.now();
    if (!this.current || now >= this.current.nextAt) this.current = this.start(now);
    const read = this.current.since;
    if (await settlesBy(this.clock, now + STORE_GAUGE.WAIT_MS, read)) {
      const since = await read;
      if (since !== undefined) this.last = since;
    }
    if (this.last === undefined) return undefined;
    return this.last === null ? 0 : Math.max(0, this.clock.now() - this.last.getTime()) / 1000;
  }

  private start(startedAt: number): Read {
    const read: Read = { nextAt: startedAt + STORE_GAUGE.MAX_EVERY_MS, since: Promise.resolve(undefined) };
    read.since = this.read()
      .catch(() => undefined)
      .finally(() => {
        const tookMs = this.clock.now() - startedAt;
        read.nextAt =
          startedAt +
          Math.min(STORE_GAUGE.MAX_EVERY_MS, Math.max(STORE_GAUGE.MIN_EVERY_MS, tookMs * STORE_GAUGE.COST_FACTOR));
      });
    return read;
  }
}
