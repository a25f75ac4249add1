/**
 * The calls an instance made recently, granted or local, kept so that it can tell a hub what it
 * spent (D30): in its hello after every (re)connection, a hub counts them as occupied slots. It
 * also tells the fallback when the instance's own granted calls stopped (local-fallback.ts).
 *
 * Ended calls are kept for two windows, a margin for a hub whose clock or window differs a little.
 */
import type { Clock } from '@opco-proxy/core';
import { GRANT_TTL_S, MAX_USAGE_ENTRIES, type UsageEntry } from '../protocol.js';

const GRANT_TTL_MS = GRANT_TTL_S * 1000;

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
  /** Per opcoId: granted calls in flight, and the latest time an ended one may have arrived. */
  private readonly grantsInFlight = new Map<string, Set<LedgerEntry>>();
  private readonly grantsLastEnd = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = MAX_USAGE_ENTRIES,
  ) {}

  start(opcoId: string, id: string, kind: LedgerEntry['kind'], windowMs: number): LedgerEntry {
    const entry: LedgerEntry = { id, opcoId, kind, startedAt: this.clock.now(), windowMs };
    this.entries.push(entry);
    if (kind === 'grant') {
      let inFlight = this.grantsInFlight.get(opcoId);
      if (!inFlight) this.grantsInFlight.set(opcoId, (inFlight = new Set()));
      inFlight.add(entry);
    }
    // Pruning scans everything, so it runs when the list has doubled, not at every call.
    if (this.entries.length > 2 * this.prunedAtSize + 100) this.prune();
    return entry;
  }

  end(entry: LedgerEntry): void {
    if (entry.endedAt !== undefined) return;
    entry.endedAt = this.clock.now();
    if (entry.kind === 'grant' && this.grantsInFlight.get(entry.opcoId)?.delete(entry)) {
      const arrivedBy = Math.min(entry.endedAt, entry.startedAt + GRANT_TTL_MS);
      this.grantsLastEnd.set(entry.opcoId, Math.max(this.grantsLastEnd.get(entry.opcoId) ?? -Infinity, arrivedBy));
    }
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
    let last = this.grantsLastEnd.get(opcoId) ?? -Infinity;
    for (const entry of this.grantsInFlight.get(opcoId) ?? []) last = Math.max(last, entry.startedAt + GRANT_TTL_MS);
    return last;
  }

  /** Calls of this instance for the opcoId a window of `windowMs` still counts: in flight, or ended within it. */
  counted(opcoId: string, windowMs: number): number {
    const now = this.clock.now();
    return this.entries.filter((e) => e.opcoId === opcoId && (e.endedAt === undefined || now - e.endedAt < windowMs))
      .length;
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
