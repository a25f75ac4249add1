/**
 * One upstream budget of the hub: one fleet and one opcoId (D28), in the slot model of
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
 *
 * The slots of unproven tenants' calls (issue 27) are also counted apart, the same way, for the
 * scheduler to keep them within their slice of the window.
 */
import { LaneQueue, type LaneEntry } from '@opco-proxy/core';
import type { HttpMethod, RateLimit } from '@opco-proxy/plugin-hub';

export interface Slot {
  id: string;
  instanceId: string;
  issuedAt: number;
  /** When the slot is counted as ended if nobody reports it done (grant `exp`). */
  deadline: number;
  /** Granted to an unproven tenant: counted in the unproven slice too. */
  unproven?: boolean;
}

/**
 * An ask waiting for a slot; served in FairQueue order (priority, then CFA tenants in turn), an
 * unproven one only while the unproven slice has room (LaneQueue).
 */
export interface WaitingAsk extends LaneEntry {
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
  fleetId: string;
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
  unproven: boolean;
}

interface Ended {
  at: number;
  id?: string;
  unproven?: boolean;
}

export class GrantBudget {
  readonly waiting = new LaneQueue<WaitingAsk>();
  private readonly held = new Map<string, Slot>();
  /** Ended slots still inside the window, oldest end first. */
  private readonly ended: Ended[] = [];
  /** How many of the held and of the ended slots are unproven tenants'. */
  private heldUnproven = 0;
  private endedUnproven = 0;
  /** Ids of ended slots still counted, so a slot reported twice is counted once. */
  private readonly endedIds = new Set<string>();
  /** Issue times of the grants of the last window (GET /admin/limits). */
  private readonly issued: number[] = [];

  constructor(
    readonly fleetId: string,
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

  /** The same count for the slots of unproven tenants. */
  unprovenOccupied(now: number): number {
    this.forget(now);
    return this.heldUnproven + this.endedUnproven;
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
    if (this.held.has(slot.id)) return; // held twice would count its lane twice
    this.held.set(slot.id, slot);
    if (slot.unproven) this.heldUnproven += 1;
    if (issued) this.issued.push(slot.issuedAt);
  }

  /** The call of a held slot ended at `at`: counted until `at + windowMs`. */
  end(id: string, at: number): boolean {
    const slot = this.release(id);
    if (!slot) return false;
    this.addEnded(Math.max(at, slot.issuedAt), id, slot.unproven);
    return true;
  }

  /** The grant was never used: its slot is free at once. */
  free(id: string): boolean {
    return this.release(id) !== undefined;
  }

  /** A call the budget did not hand out (reported by an instance) that ended at `at`. */
  addEnded(at: number, id?: string, unproven = false): void {
    if (id !== undefined) {
      if (this.endedIds.has(id)) return;
      this.endedIds.add(id);
    }
    if (unproven) this.endedUnproven += 1;
    // Sorted insert: reported ends may be older than ends already recorded.
    let index = this.ended.length;
    while (index > 0 && this.ended[index - 1].at > at) index -= 1;
    this.ended.splice(index, 0, { at, ...(id === undefined ? {} : { id }), ...(unproven ? { unproven } : {}) });
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
    while (this.ended.length > 0 && this.ended[0].at <= horizon) {
      const { id, unproven } = this.ended.shift()!;
      if (id !== undefined) this.endedIds.delete(id);
      if (unproven) this.endedUnproven -= 1;
    }
    while (this.issued.length > 0 && this.issued[0] <= horizon) this.issued.shift();
  }

  private release(id: string): Slot | undefined {
    const slot = this.held.get(id);
    if (!slot) return undefined;
    this.held.delete(id);
    if (slot.unproven) this.heldUnproven -= 1;
    return slot;
  }
}
