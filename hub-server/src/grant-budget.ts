/**
 * One upstream budget of the hub: one fleet and one opcoId (D28), on core's one rolling window
 * (core/src/limits/rolling-window.ts).
 *
 * A slot is taken when a grant is issued and stays *held* until the instance reports the call
 * done; it then stays counted for `windowMs` after that report. The upstream counts a call when it
 * arrives, which is after the grant was issued and before the hub hears it is done, so issuing
 * only while fewer than `limit` slots count keeps every window the upstream sees at `limit` or less.
 *
 * A grant never reported done (its instance died) is counted as ending at its JWT's `exp`: the
 * call was sent at once with a token valid until then, so it reached the upstream before.
 *
 * The slots of unproven tenants' calls (issue 27) are also counted apart, the same way, for the
 * scheduler to keep them within their slice of the window.
 */
import { LaneQueue, leavesWindowAt, RollingWindow, type LaneEntry } from '@opco-proxy/core/limits';
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

export class GrantBudget {
  readonly waiting = new LaneQueue<WaitingAsk>();
  /** The slots of grants not yet reported done, with what the scheduler needs of each. */
  private readonly held = new Map<string, Slot>();
  private readonly window: RollingWindow;
  /** The grants issued in the last window (GET /admin/limits), counted as calls ended when issued. */
  private readonly issued: RollingWindow;
  private rateLimit: RateLimit;

  constructor(
    readonly fleetId: string,
    readonly opcoId: string,
    configured: RateLimit,
  ) {
    this.rateLimit = configured;
    this.window = new RollingWindow(configured.windowMs);
    this.issued = new RollingWindow(configured.windowMs);
  }

  get configured(): RateLimit {
    return this.rateLimit;
  }

  /** A new rate limit applies to the next grants; slots already counted keep counting. */
  set configured(rateLimit: RateLimit) {
    this.rateLimit = rateLimit;
    this.window.windowMs = rateLimit.windowMs;
    this.issued.windowMs = rateLimit.windowMs;
  }

  get windowMs(): number {
    return this.rateLimit.windowMs;
  }

  /** Held slots plus ended ones whose window has not passed. */
  occupied(now: number): number {
    this.endOverdue(now);
    return this.window.occupied(now);
  }

  /** The same count for the slots of unproven tenants. */
  unprovenOccupied(now: number): number {
    this.endOverdue(now);
    return this.window.unprovenOccupied(now);
  }

  grantsInWindow(now: number): number {
    return this.issued.occupied(now);
  }

  has(id: string): boolean {
    return this.held.has(id) || this.window.hasEnded(id);
  }

  heldSlot(id: string): Slot | undefined {
    return this.held.get(id);
  }

  hold(slot: Slot, issued = true): void {
    if (this.held.has(slot.id)) return; // held twice would count its lane twice
    this.held.set(slot.id, slot);
    this.window.hold(slot.unproven === true);
    if (issued) this.issued.addEnded(slot.issuedAt);
  }

  /** The call of a held slot ended at `at`: counted until `at + windowMs`. */
  end(id: string, at: number): boolean {
    const slot = this.held.get(id);
    if (!slot) return false;
    this.held.delete(id);
    this.window.end(Math.max(at, slot.issuedAt), slot.unproven === true, id);
    return true;
  }

  /** The grant was never used: its slot is free at once. */
  free(id: string): boolean {
    const slot = this.held.get(id);
    if (!slot) return false;
    this.held.delete(id);
    this.window.drop(slot.unproven === true);
    return true;
  }

  /** A call the budget did not hand out (reported by an instance) that ended at `at`. */
  addEnded(at: number, id?: string, unproven = false): void {
    this.window.addEnded(at, unproven, id);
  }

  /** Held slots of an instance (for reconciling its usage report). */
  heldBy(instanceId: string): Slot[] {
    return [...this.held.values()].filter((slot) => slot.instanceId === instanceId);
  }

  /** When counting may next drop: the oldest end or held deadline leaving the window. */
  nextReleaseAt(): number | undefined {
    let next = this.window.nextLeaveAt();
    for (const slot of this.held.values()) {
      const at = leavesWindowAt(slot.deadline, this.windowMs);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Held slots past their deadline (their instance never reported them) end there. */
  private endOverdue(now: number): void {
    for (const slot of this.held.values()) if (slot.deadline <= now) this.end(slot.id, slot.deadline);
  }
}
