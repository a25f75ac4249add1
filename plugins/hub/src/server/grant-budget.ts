/**
 * One upstream budget of the hub: one hub tenantId and one opcoId (D28), in the slot model of
 * core's LocalBucket.
 *
 * A slot is taken when a grant is issued and stays *held* until the instance reports the call
 * done; it then stays counted for `windowMs` after that report. The upstream counts a call when it
 * arrives, which is after the grant was issued and before the hub hears it is done, so every call
 * arriving within a rolling window was counted when the last of them was granted: issuing only
 * while fewer than `limit` slots count keeps every window the upstream sees at `limit` or less.
 *
 * A grant never reported done (its instance died) is counted as ending at its JWT's `exp`: the
 * call was sent at once with a token valid until then, so it reached the upstream before.
 */
import { FairQueue, type FairEntry } from '@opco-proxy/core';
import type { HttpMethod, RateLimit } from '../protocol.js';

export interface Slot {
  id: string;
  instanceId: string;
  issuedAt: number;
  /** When the slot is counted as ended if nobody reports it done (grant `exp`). */
  deadline: number;
}

/** An ask waiting for a slot; served in FairQueue order (priority, then CFA tenants in turn). */
export interface WaitingAsk extends FairEntry {
  askId: string;
  instanceId: string;
  opcoId: string;
  method: HttpMethod;
  route: string;
  askedAt: number;
  /** Set once the ask was granted or cancelled; a settled ask is no longer in any queue. */
  settled: boolean;
  onGrant(grant: IssuedGrant): void;
}

export interface IssuedGrant {
  grantId: string;
  askId: string;
  tenantId: string;
  opcoId: string;
  instanceId: string;
  method: HttpMethod;
  route: string;
  /** JWT times, in seconds. */
  iat: number;
  exp: number;
  issuedAt: number;
  waitedMs: number;
  /** Needed by the journal to rebuild the budget after a restart. */
  rateLimit: RateLimit;
}

interface Ended {
  at: number;
  id?: string;
}

export class GrantBudget {
  readonly waiting = new FairQueue<WaitingAsk>();
  private readonly held = new Map<string, Slot>();
  /** Ended slots still inside the window, oldest end first. */
  private readonly ended: Ended[] = [];
  /** Ids of ended slots still counted, so a slot reported twice is counted once. */
  private readonly endedIds = new Set<string>();
  /** Issue times of the grants of the last window (GET /admin/limits). */
  private readonly issued: number[] = [];

  constructor(
    readonly tenantId: string,
    readonly opcoId: string,
    public configured: RateLimit,
  ) {}

  get windowMs(): number {
    return this.configured.windowMs;
  }

  /** Held slots plus ended ones whose window has not passed. */
  occupied(now: number): number {
    this.forget(now);
    return this.held.size + this.ended.length;
  }

  grantsInWindow(now: number): number {
    this.forget(now);
    return this.issued.length;
  }

  has(id: string): boolean {
    return this.held.has(id) || this.endedIds.has(id);
  }

  heldSlot(id: string): Slot | undefined {
    return this.held.get(id);
  }

  hold(slot: Slot, issued = true): void {
    this.held.set(slot.id, slot);
    if (issued) this.issued.push(slot.issuedAt);
  }

  /** The call of a held slot ended at `at`: counted until `at + windowMs`. */
  end(id: string, at: number): boolean {
    const slot = this.held.get(id);
    if (!slot) return false;
    this.held.delete(id);
    this.addEnded(Math.max(at, slot.issuedAt), id);
    return true;
  }

  /** The grant was never used: its slot is free at once. */
  free(id: string): boolean {
    return this.held.delete(id);
  }

  /** A call the budget did not hand out (reported by an instance) that ended at `at`. */
  addEnded(at: number, id?: string): void {
    if (id !== undefined) {
      if (this.endedIds.has(id)) return;
      this.endedIds.add(id);
    }
    // Sorted insert: reported ends may be older than ends already recorded.
    let index = this.ended.length;
    while (index > 0 && this.ended[index - 1]!.at > at) index -= 1;
    this.ended.splice(index, 0, id === undefined ? { at } : { at, id });
  }

  /** Held slots of an instance (for reconciling its usage report). */
  heldBy(instanceId: string): Slot[] {
    return [...this.held.values()].filter((slot) => slot.instanceId === instanceId);
  }

  /** When counting may next drop: the oldest end or held deadline leaving the window. */
  nextReleaseAt(): number | undefined {
    let next = this.ended[0] ? this.ended[0].at + this.windowMs : undefined;
    for (const slot of this.held.values()) {
      const at = slot.deadline + this.windowMs;
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Held slots past their deadline end there; ends older than the window stop counting. */
  private forget(now: number): void {
    for (const slot of this.held.values()) if (slot.deadline <= now) this.end(slot.id, slot.deadline);
    const horizon = now - this.windowMs;
    while (this.ended.length > 0 && this.ended[0]!.at <= horizon) {
      const { id } = this.ended.shift()!;
      if (id !== undefined) this.endedIds.delete(id);
    }
    while (this.issued.length > 0 && this.issued[0]! <= horizon) this.issued.shift();
  }
}
