/**
 * The rolling window of upstream calls, the one arithmetic of every budget (D12, issue 41): a call
 * holds a slot from admission to its end, and the slot stays counted for `windowMs` after the end.
 * The upstream counts a call when it arrives, which is between the two, so admitting only while
 * fewer than `limit` slots count keeps every rolling window it sees at `limit` calls or less.
 *
 * Used in memory by the hub's fallback (local-bucket.ts) and the hub's grants
 * (hub-server/src/grant-budget.ts); the store budget (store-budget.ts) keeps the same slots as
 * documents, each stamped with its call's end, and asks `freeBefore` which of them count.
 * The calls of unproven tenants (issue 27) are counted apart too, for their slice of the window.
 */

/** A slot whose call ended at or before this time no longer counts. */
export function freeBefore(now: number, windowMs: number): number {
  return now - windowMs;
}

/** When a call that ended at `endedAt` stops counting. */
export function leavesWindowAt(endedAt: number, windowMs: number): number {
  return endedAt + windowMs;
}

interface Ended {
  at: number;
  id?: string;
  unproven: boolean;
}

export class RollingWindow {
  private held = 0;
  private heldUnproven = 0;
  /** Ended calls still inside the window, oldest end first. */
  private readonly ended: Ended[] = [];
  private endedUnproven = 0;
  /** Ids of ended calls still counted, so a call reported twice is counted once. */
  private readonly endedIds = new Set<string>();

  constructor(public windowMs: number) {}

  /** Held slots plus ended ones still inside the window at `now`. */
  occupied(now: number): number {
    this.forget(now);
    return this.held + this.ended.length;
  }

  /** The same count for the calls of unproven tenants. */
  unprovenOccupied(now: number): number {
    this.forget(now);
    return this.heldUnproven + this.endedUnproven;
  }

  /** A call admitted: its slot counts until `windowMs` after it ends. */
  hold(unproven = false): void {
    this.held += 1;
    if (unproven) this.heldUnproven += 1;
  }

  /** A held slot given back unused (the call was never sent): it stops counting at once. */
  drop(unproven = false): void {
    this.held -= 1;
    if (unproven) this.heldUnproven -= 1;
  }

  /** The call of a held slot ended at `at`. */
  end(at: number, unproven = false, id?: string): void {
    this.drop(unproven);
    this.addEnded(at, unproven, id);
  }

  /** A call that ended at `at` without a held slot here (reported by another instance). */
  addEnded(at: number, unproven = false, id?: string): void {
    if (id !== undefined) {
      if (this.endedIds.has(id)) return;
      this.endedIds.add(id);
    }
    if (unproven) this.endedUnproven += 1;
    // Sorted insert: a reported end may be older than ends already recorded (usually appended).
    let index = this.ended.length;
    while (index > 0 && this.ended[index - 1].at > at) index -= 1;
    this.ended.splice(index, 0, { at, unproven, ...(id !== undefined && { id }) });
  }

  /** Whether a call of this id ended and still counts. */
  hasEnded(id: string): boolean {
    return this.endedIds.has(id);
  }

  /** When the oldest ended call leaves the window; undefined when none counts. */
  nextLeaveAt(): number | undefined {
    return this.ended.length > 0 ? leavesWindowAt(this.ended[0].at, this.windowMs) : undefined;
  }

  private forget(now: number): void {
    const horizon = freeBefore(now, this.windowMs);
    while (this.ended.length > 0 && this.ended[0].at <= horizon) {
      const { id, unproven } = this.ended.shift()!;
      if (id !== undefined) this.endedIds.delete(id);
      if (unproven) this.endedUnproven -= 1;
    }
  }
}
