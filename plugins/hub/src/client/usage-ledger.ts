/**
 * The calls an instance made recently, granted or local, kept so that it can tell a hub what it
 * spent (D30): in its hello after every (re)connection, a hub counts them as occupied slots. It
 * also tells the fallback when the instance's own granted calls stopped (local-fallback.ts).
 *
 * Ended calls are kept for two windows, a margin for a hub whose clock or window differs a little.
 */
import type { Clock } from '@opco-proxy/core';
import { GRANT_TTL_S, MAX_USAGE_ENTRIES, type UsageEntry } from '../protocol.js';

export interface LedgerEntry {
  id: string;
  opcoId: string;
  kind: 'grant' | 'local';
  startedAt: number;
  endedAt?: number;
  windowMs: number;
}

export class UsageLedger {
  private entries: LedgerEntry[] = [];
  private prunedAtSize = 0;

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = MAX_USAGE_ENTRIES,
  ) {}

  start(opcoId: string, id: string, kind: LedgerEntry['kind'], windowMs: number): LedgerEntry {
    const entry: LedgerEntry = { id, opcoId, kind, startedAt: this.clock.now(), windowMs };
    this.entries.push(entry);
    // Pruning scans everything, so it runs when the list has doubled, not at every call.
    if (this.entries.length > 2 * this.prunedAtSize + 100) this.prune();
    return entry;
  }

  end(entry: LedgerEntry): void {
    entry.endedAt ??= this.clock.now();
  }

  /** The hello's report: ages rather than times, so the hub's clock need not agree with ours. */
  report(): { usage: UsageEntry[]; complete: boolean } {
    this.prune();
    const now = this.clock.now();
    const kept = this.entries.slice(-this.maxEntries);
    const usage = kept.map((e) => {
      const item: UsageEntry = { id: e.id, opcoId: e.opcoId, startedAgoMs: Math.max(0, now - e.startedAt) };
      if (e.endedAt !== undefined) item.endedAgoMs = Math.max(0, now - e.endedAt);
      return item;
    });
    return { usage, complete: kept.length === this.entries.length };
  }

  /**
   * Until when this instance's granted calls for the opcoId may have reached the upstream: their
   * end, or the grant's lifetime after their start for a call still in flight (a call is sent at
   * once, with a token that expires then).
   */
  grantsEndedAt(opcoId: string): number {
    let last = -Infinity;
    for (const entry of this.entries) {
      if (entry.kind !== 'grant' || entry.opcoId !== opcoId) continue;
      last = Math.max(last, Math.min(entry.endedAt ?? Infinity, entry.startedAt + GRANT_TTL_S * 1000));
    }
    return last;
  }

  size(): number {
    return this.entries.length;
  }

  private prune(): void {
    const now = this.clock.now();
    this.entries = this.entries.filter((e) => e.endedAt === undefined || now - e.endedAt < 2 * e.windowMs);
    this.prunedAtSize = this.entries.length;
  }
}
