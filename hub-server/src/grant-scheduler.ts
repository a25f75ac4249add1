/**
 * The hub's grant scheduler (D29, D30): pure logic on a Clock, no sockets, no store.
 *
 * - One GrantBudget per (fleet, opcoId): instances whose keys share a fleetId share it,
 *   two fleets never do. No per-instance share: whoever asks gets what is free.
 * - Waiting asks are served by priority, CFA tenants of a priority taking turns (FairQueue).
 * - Asks of unproven tenants (issue 27) share `unprovenSlice(effective limit, unprovenShare)`
 *   grants of each window; while that slice is full they wait without holding back proven asks,
 *   which may use the whole budget (LaneQueue).
 * - The effective limit of a budget follows the metrics its instances report (AdaptiveLimit).
 * - Restart rule (D30): see `reserved()`, and `connect()` / `restore()` for what instances
 *   and the grant journal tell a hub that has just started.
 */
import { randomHex, type Clock, type Timer } from '@opco-proxy/core';
import { unprovenSlice } from '@opco-proxy/core/limits';
import { DEFAULTS } from '@opco-proxy/core/application';
import {
  GRANT_TTL_S,
  type HttpMethod,
  type MetricsReport,
  type RateLimit,
  type UsageEntry,
} from '@opco-proxy/plugin-hub';
import { AdaptiveLimit, DEFAULT_ADAPTIVE, type AdaptiveOptions } from './adaptive-limit.js';
import { GrantBudget, type IssuedGrant, type WaitingAsk } from './grant-budget.js';

export type { IssuedGrant, WaitingAsk } from './grant-budget.js';

/** OpcoIds learned from instances (each one a budget per fleetId): a bound against a peer inventing them. */
export const MAX_LEARNED_OPCOS = 1000;

export interface SchedulerObserver {
  granted?(grant: IssuedGrant): void;
  /** A held slot ended at `at` (counted until `at + windowMs`), or was never used and freed. */
  ended?(slot: { fleetId: string; id: string; at: number; windowMs: number; outcome: 'used' | 'unused' }): void;
  /** An ask found no free slot and waits. */
  queued?(fleetId: string, opcoId: string): void;
}

export interface SchedulerOptions {
  clock: Clock;
  /** Configured limits per opcoId (hub config); other opcoIds take the first reported limit. */
  opcos?: Record<string, RateLimit>;
  /** Start of the hub; the restart rule holds for the first window after it. */
  startedAt?: number;
  adaptive?: Partial<AdaptiveOptions>;
  /** Share of each window's effective limit that unproven tenants share (default core's, 0.1). */
  unprovenShare?: number;
  observer?: SchedulerObserver;
}

export interface AskInput {
  askId: string;
  instanceId: string;
  opcoId: string;
  method: HttpMethod;
  route: string;
  priority: number;
  tenant: string;
  rateLimit: RateLimit;
  /** Absent means proven: what an instance of the previous version sends (protocol.ts). */
  proven?: boolean;
}

/** What an instance tells in its hello (protocol.ts). */
export interface InstanceHello {
  expectedInstances: number;
  limits: Record<string, RateLimit>;
  usage: UsageEntry[];
  complete: boolean;
}

/** A grant found in the journal at start-up, handed out by the hub before it restarted. */
export interface JournalGrant {
  id: string;
  fleetId: string;
  opcoId: string;
  instanceId: string;
  issuedAt: number;
  deadline: number;
  /** Set when the instance reported the call done before the restart. */
  endedAt?: number;
  rateLimit: RateLimit;
  /** Granted to an unproven tenant; absent in journals written before issue 27. */
  unproven?: boolean;
}

export interface LimitView {
  fleetId: string;
  opcoId: string;
  configuredLimit: number;
  effectiveLimit: number;
  windowMs: number;
  grantsInWindow: number;
  occupied: number;
  /** Kept back for expected instances not connected yet (restart rule). */
  reserved: number;
  waiting: number;
  /** The unproven tenants' slice: its size, its slots counted like `occupied`, its waiting asks. */
  unproven: { limit: number; occupied: number; waiting: number };
}

interface BudgetState {
  budget: GrantBudget;
  adaptive: AdaptiveLimit;
  wake?: Timer;
}

interface FleetState {
  /** The largest `expectedInstances` an instance of this fleetId announced. */
  expected: number;
  connected: Set<string>;
}

export class GrantScheduler {
  private readonly clock: Clock;
  private readonly startedAt: number;
  private readonly adaptiveOptions: AdaptiveOptions;
  private unprovenShare: number;
  private readonly observer: SchedulerObserver;
  private configured = new Map<string, RateLimit>();
  private readonly learned = new Map<string, RateLimit>();
  private readonly budgets = new Map<string, Map<string, BudgetState>>();
  private readonly fleets = new Map<string, FleetState>();
  private adaptTimer: Timer | undefined;
  private closed = false;

  constructor(options: SchedulerOptions) {
    this.clock = options.clock;
    this.startedAt = options.startedAt ?? this.clock.now();
    this.adaptiveOptions = { ...DEFAULT_ADAPTIVE, ...options.adaptive };
    this.unprovenShare = options.unprovenShare ?? DEFAULTS.tenantKeys.unprovenShare;
    this.observer = options.observer ?? {};
    this.setOpcoLimits(options.opcos ?? {});
    this.armAdaptTimer();
  }

  /** Configured limits (start and reload): they apply at once, to waiting asks too. */
  setOpcoLimits(opcos: Record<string, RateLimit>): void {
    this.configured = new Map(Object.entries(opcos));
    for (const [opcoId, rateLimit] of this.configured) {
      for (const budgets of this.budgets.values()) {
        const state = budgets.get(opcoId);
        if (!state) continue;
        state.budget.configured = { ...rateLimit };
        state.adaptive.setConfigured(rateLimit.limit);
        this.serve(state);
      }
    }
  }

  /** A new share for the unproven slice (reload): it applies at once, to waiting asks too. */
  setUnprovenShare(share: number): void {
    this.unprovenShare = share;
    for (const budgets of this.budgets.values()) for (const state of budgets.values()) this.serve(state);
  }

  /**
   * An instance said hello, with the calls it made in the last window: through grants of this
   * hub, of a hub before a restart, or of its local bucket while it had no hub, and those still in
   * flight. Known grants are updated, unknown calls become counted slots; with a complete report,
   * a held grant of this instance that the report does not name was never used (lost with the old
   * connection) and is freed. Only then does the instance count as connected, which drops the
   * restart reserve kept for it: what it spent while away is counted instead.
   */
  connect(fleetId: string, instanceId: string, hello: InstanceHello): void {
    for (const [opcoId, rateLimit] of Object.entries(hello.limits)) this.learn(opcoId, rateLimit);
    const now = this.clock.now();
    const named = new Set<string>();
    for (const entry of hello.usage) {
      named.add(entry.id);
      const state = this.state(fleetId, entry.opcoId);
      if (state) this.account(state.budget, instanceId, entry, now); // else no limit known: nothing can be granted for it either
    }
    if (hello.complete) {
      for (const state of this.budgets.get(fleetId)?.values() ?? []) {
        for (const slot of state.budget.heldBy(instanceId))
          if (!named.has(slot.id)) this.endSlot(state.budget, slot.id, now, 'unused');
      }
    }
    const fleet = this.fleet(fleetId);
    fleet.expected = Math.max(fleet.expected, hello.expectedInstances);
    fleet.connected.add(instanceId);
    this.serveFleet(fleetId);
  }

  /** The instance's connection closed: its grants in flight stay counted until done or expired. */
  disconnect(fleetId: string, instanceId: string): void {
    this.fleets.get(fleetId)?.connected.delete(instanceId);
    for (const state of this.budgets.get(fleetId)?.values() ?? []) state.adaptive.forget(instanceId);
    this.serveFleet(fleetId);
  }

  /** Grants handed out before a restart (from the journal): held until reported or expired. */
  restore(grants: JournalGrant[]): void {
    for (const grant of grants) {
      this.learn(grant.opcoId, grant.rateLimit);
      const state = this.state(grant.fleetId, grant.opcoId);
      if (!state || state.budget.has(grant.id)) continue;
      if (grant.endedAt !== undefined) state.budget.addEnded(grant.endedAt, grant.id, grant.unproven);
      else
        state.budget.hold({
          id: grant.id,
          instanceId: grant.instanceId,
          issuedAt: grant.issuedAt,
          deadline: grant.deadline,
          unproven: grant.unproven,
        });
    }
  }

  /**
   * Queues an ask; `onGrant` may be called before this returns when a slot is free. Undefined
   * when the scheduler is closed or the opcoId has no budget (too many opcoIds learned).
   */
  ask(fleetId: string, input: AskInput, onGrant: (grant: IssuedGrant) => void): WaitingAsk | undefined {
    if (this.closed) return undefined;
    this.learn(input.opcoId, input.rateLimit);
    const state = this.state(fleetId, input.opcoId);
    if (!state) return undefined;
    const { rateLimit: _rateLimit, proven, ...fields } = input;
    const ask: WaitingAsk = { ...fields, proven: proven !== false, askedAt: this.clock.now(), settled: false, onGrant };
    state.budget.waiting.push(ask);
    this.serve(state);
    if (!ask.settled) this.observer.queued?.(fleetId, input.opcoId);
    return ask;
  }

  cancel(fleetId: string, ask: WaitingAsk): boolean {
    const state = this.budgets.get(fleetId)?.get(ask.opcoId);
    if (ask.settled || !state?.budget.waiting.remove(ask)) return false;
    ask.settled = true;
    return true;
  }

  /** The instance ended a granted call (`used`), or never made it (`unused`: the slot frees at once). */
  done(fleetId: string, instanceId: string, grantId: string, outcome: 'used' | 'unused'): boolean {
    for (const state of this.budgets.get(fleetId)?.values() ?? []) {
      const slot = state.budget.heldSlot(grantId);
      if (!slot || slot.instanceId !== instanceId) continue;
      this.endSlot(state.budget, grantId, this.clock.now(), outcome);
      this.serve(state);
      return true;
    }
    return false;
  }

  /** An instance's metrics windows (every few seconds); used at the next adaptation step. */
  observe(fleetId: string, instanceId: string, windows: Record<string, MetricsReport>): void {
    for (const [opcoId, report] of Object.entries(windows)) {
      this.state(fleetId, opcoId)?.adaptive.observe(instanceId, report);
    }
  }

  /** One adaptation step for every budget (run every `adaptive.intervalMs` on the clock). */
  adapt(): void {
    for (const budgets of this.budgets.values()) {
      for (const state of budgets.values()) {
        state.adaptive.step();
        this.serve(state);
      }
    }
  }

  limits(): LimitView[] {
    const now = this.clock.now();
    const views: LimitView[] = [];
    for (const budgets of this.budgets.values()) {
      for (const { budget, adaptive } of budgets.values()) {
        views.push({
          fleetId: budget.fleetId,
          opcoId: budget.opcoId,
          configuredLimit: budget.configured.limit,
          effectiveLimit: adaptive.effective,
          windowMs: budget.windowMs,
          grantsInWindow: budget.grantsInWindow(now),
          occupied: budget.occupied(now),
          reserved: this.reserved(budget, now),
          waiting: budget.waiting.size,
          unproven: {
            limit: this.slice(adaptive),
            occupied: budget.unprovenOccupied(now),
            waiting: budget.waiting.unprovenSize,
          },
        });
      }
    }
    return views;
  }

  connectedInstances(): Map<string, number> {
    return new Map([...this.fleets].map(([fleetId, fleet]) => [fleetId, fleet.connected.size]));
  }

  /** Stops the timers; waiting asks are dropped (their connections are closing). */
  close(): void {
    this.closed = true;
    this.adaptTimer?.cancel();
    for (const budgets of this.budgets.values()) {
      for (const state of budgets.values()) {
        state.wake?.cancel();
        for (const ask of state.budget.waiting.drain()) ask.settled = true;
      }
    }
  }

  /**
   * The restart rule (D30). An instance that lost its hub makes no local call during the window
   * after the loss, then at most `floor(limit / expectedInstances)` per window (its share). So for
   * the first window after the hub starts, each budget keeps back one share per expected instance
   * of its fleetId that is not connected: that instance may be spending its share right now and
   * will report it when it connects. Instances still away after that window are taken for dead.
   */
  reserved(budget: GrantBudget, now: number): number {
    if (now >= this.startedAt + budget.windowMs) return 0;
    const fleet = this.fleets.get(budget.fleetId);
    if (!fleet || fleet.expected === 0) return 0;
    const missing = Math.max(0, fleet.expected - fleet.connected.size);
    return missing * Math.max(1, Math.floor(budget.configured.limit / fleet.expected));
  }

  private account(budget: GrantBudget, instanceId: string, entry: UsageEntry, now: number): void {
    const startedAt = now - entry.startedAgoMs;
    if (budget.heldSlot(entry.id)) {
      if (entry.endedAgoMs !== undefined) this.endSlot(budget, entry.id, now - entry.endedAgoMs, 'used');
    } else if (!budget.has(entry.id)) {
      if (entry.endedAgoMs !== undefined) budget.addEnded(now - entry.endedAgoMs, entry.id);
      // In flight: counted until done, or until the upstream call limit (30 s) after its start.
      else
        budget.hold({ id: entry.id, instanceId, issuedAt: startedAt, deadline: startedAt + GRANT_TTL_S * 1000 }, false);
    }
  }

  /** Ends or frees a held slot, and tells the observer (the journal keeps ends for a restart). */
  private endSlot(budget: GrantBudget, id: string, at: number, outcome: 'used' | 'unused'): void {
    const ended = outcome === 'used' ? budget.end(id, at) : budget.free(id);
    if (ended) this.observer.ended?.({ fleetId: budget.fleetId, id, at, windowMs: budget.windowMs, outcome });
  }

  private serve(state: BudgetState): void {
    const { budget, adaptive } = state;
    const now = this.clock.now();
    const cap = adaptive.effective - this.reserved(budget, now);
    const slice = this.slice(adaptive);
    while (budget.occupied(now) < cap) {
      const ask = budget.waiting.shift(budget.unprovenOccupied(now) < slice);
      if (!ask) break;
      this.issue(budget, ask, now);
    }
    this.scheduleWake(state, now);
  }

  /** Follows the effective limit: when the upstream tolerates less, strangers get less too. */
  private slice(adaptive: AdaptiveLimit): number {
    return unprovenSlice(adaptive.effective, this.unprovenShare);
  }

  private issue(budget: GrantBudget, ask: WaitingAsk, now: number): void {
    const iat = Math.floor(now / 1000);
    const exp = iat + GRANT_TTL_S;
    const grantId = randomHex(16);
    budget.hold({
      id: grantId,
      instanceId: ask.instanceId,
      issuedAt: now,
      deadline: exp * 1000,
      unproven: !ask.proven,
    });
    ask.settled = true;
    const grant: IssuedGrant = {
      grantId,
      askId: ask.askId,
      fleetId: budget.fleetId,
      opcoId: budget.opcoId,
      instanceId: ask.instanceId,
      method: ask.method,
      route: ask.route,
      iat,
      exp,
      issuedAt: now,
      waitedMs: now - ask.askedAt,
      rateLimit: { ...budget.configured },
      unproven: !ask.proven,
    };
    this.observer.granted?.(grant);
    ask.onGrant(grant);
  }

  /**
   * Asks wait: wake when a slot may leave the window, or when the restart reserve ends. Asks
   * waiting for the unproven slice may wake early (a proven slot left): serving finds out.
   */
  private scheduleWake(state: BudgetState, now: number): void {
    state.wake?.cancel();
    state.wake = undefined;
    if (this.closed || state.budget.waiting.size === 0) return;
    let at = state.budget.nextReleaseAt();
    const reserveEnds = this.startedAt + state.budget.windowMs;
    if (this.reserved(state.budget, now) > 0 && (at === undefined || reserveEnds < at)) at = reserveEnds;
    if (at === undefined) return; // only a connection or a limit change can help; they serve again
    state.wake = this.clock.setTimeout(() => this.serve(state), Math.max(1, at - now));
  }

  private serveFleet(fleetId: string): void {
    for (const state of this.budgets.get(fleetId)?.values() ?? []) this.serve(state);
  }

  /** An opcoId the config does not list takes the first limit an instance reports for it (D28). */
  private learn(opcoId: string, rateLimit: RateLimit): void {
    if (this.configured.has(opcoId) || this.learned.has(opcoId) || this.learned.size >= MAX_LEARNED_OPCOS) return;
    this.learned.set(opcoId, { ...rateLimit });
  }

  private state(fleetId: string, opcoId: string): BudgetState | undefined {
    let budgets = this.budgets.get(fleetId);
    let state = budgets?.get(opcoId);
    if (state) return state;
    const rateLimit = this.configured.get(opcoId) ?? this.learned.get(opcoId);
    if (!rateLimit) return undefined;
    if (!budgets) this.budgets.set(fleetId, (budgets = new Map<string, BudgetState>()));
    state = {
      budget: new GrantBudget(fleetId, opcoId, { ...rateLimit }),
      adaptive: new AdaptiveLimit(rateLimit.limit, this.adaptiveOptions),
    };
    budgets.set(opcoId, state);
    return state;
  }

  private fleet(fleetId: string): FleetState {
    let fleet = this.fleets.get(fleetId);
    if (!fleet) this.fleets.set(fleetId, (fleet = { expected: 0, connected: new Set() }));
    return fleet;
  }

  private armAdaptTimer(): void {
    if (this.closed) return;
    this.adaptTimer = this.clock.setTimeout(() => {
      this.adapt();
      this.armAdaptTimer();
    }, this.adaptiveOptions.intervalMs);
  }
}
