/**
 * D11 without a hub (issue 38): how the store budget shares a window between tenants. The hub
 * serves waiting asks by priority and by turns between tenants; the store budget has no one to
 * queue at, so it gets the same effect from three rules every instance applies to its own
 * background work (jobs, sync batches, polls) from what the store says of the window:
 *
 * - **pace**: once half the window is used, background calls of an opcoId start at most at the
 *   window's rate (`limit / windowMs`), counted over every instance by the store (a tenth of the
 *   window within a tenth of its time), and one per call's spacing per instance. A bulk
 *   job then fills the rest of the window gradually, and its slots leave it as gradually,
 *   instead of all at once a window after a burst: a client read that comes meanwhile finds one
 *   within a call's spacing. Below half the window, a lone tenant's calls are not paced;
 * - **headroom**: background work never takes the last tenth of the window on its own, so a
 *   client read of another tenant finds a free slot at once (reads take any slot);
 * - **fair share**: while another tenant is active at that opcoId (a slot of its in the window,
 *   or a read of its refused or waiting for budget: an `ask`), a tenant's background work holds at
 *   most half the window, paced from its first call, and goes into the last tenth only under that
 *   half: the other tenant's reads always find their half free.
 *
 * What each instance counts of the window is kept for a call's spacing, within 25 to 250 ms, so
 * the check costs a few counts per spacing, not per call. The floor is for high limits: a count
 * reads every slot in the window (5,000 of them at 5,000 calls a second), and re-read at every
 * call's spacing it cost the worker more than the calls themselves (the jobs and webhooks
 * benches: 61 % of the service's CPU went to counting slots). Between reads, an instance counts
 * its own turns and claims; what 25 ms of the other instances' calls adds is within the headroom.
 * A calm window (under half used, with room for 250 ms of calls at the full rate) is kept 250 ms
 * whatever the limit: at 5,000 calls a second a worker completing 600 jobs a second still spent
 * a tenth of its CPU counting. The slots say whose call they hold (`tenant`); asks are one
 * document per opcoId and tenant, written at most once a second.
 */
import type { Collection, Store } from '../ports/store.js';
import type { Clock } from '../clock.js';
import { freeBefore } from './rolling-window.js';

export interface ShareKey {
  id: string;
  rateLimit: { limit: number; windowMs: number };
}

interface SlotView {
  usedAt: Date;
  tenant?: string;
}

interface Ask {
  _id: string;
  opcoId: string;
  tenant: string;
  at: Date;
  /** Swept once it has left the window twice over. */
  expiresAt: Date;
}

interface WindowView {
  readAt: number;
  /** Slots in the window when read, by every instance. */
  used: number;
  free: number;
  /** Slots claimed, by any instance, within the pace's burst (a burst's calls at the window's rate). */
  recent: number;
}

interface Contention {
  readAt: number;
  mine: number;
  others: boolean;
}

/** What background work of a tenant may do now: claim at once, claim at the paced rate, or wait. */
export type BackgroundTurn = 'now' | 'paced' | 'wait';

/** Share of the window kept free by background work, and the burst of its pacing. */
export const BACKGROUND_HEADROOM = 0.1;
/** Share of the window, at most `CALL_ALLOWANCE_MAX_MS`, by which a claim stamps its slot ahead (store-budget.ts). */
export const CALL_ALLOWANCE_SHARE = 0.02;
export const CALL_ALLOWANCE_MAX_MS = 1000;

/** How far ahead of its claim a slot's `usedAt` is stamped: the call's allowance. */
export function callAllowanceMs(windowMs: number): number {
  return Math.min(CALL_ALLOWANCE_MAX_MS, Math.floor(windowMs * CALL_ALLOWANCE_SHARE));
}

/** Bounds of how long a read of the window is kept (see the header). */
const KEPT_MIN_MS = 25;
const KEPT_MAX_MS = 250;

export class BudgetShare {
  private readonly asks: Collection<Ask>;
  /** Per opcoId: when this instance may start its next paced background call. */
  private readonly paced = new Map<string, number>();
  private readonly views = new Map<string, WindowView>();
  private readonly contentions = new Map<string, Contention>();
  private readonly reading = new Map<string, Promise<Contention>>();
  private readonly askedAt = new Map<string, number>();

  constructor(
    store: Store,
    private readonly slots: Collection<SlotView & { _id: string; opcoId: string }>,
    private readonly clock: Clock,
  ) {
    this.asks = store.collection<Ask>('upstream_budget_asks');
  }

  /**
   * ms before this instance may start another background call of the opcoId; 0 takes the turn.
   * Two rules: every instance's calls together, as the store saw them at the last read of the
   * window, at most a burst's calls (a tenth of the window) within a burst's time; and this
   * instance's at most one per call's spacing, so that N worker processes, whose reads of the
   * window are a moment old, do not each take a burst at once.
   */
  paceWait(opco: ShareKey): number {
    const { limit, windowMs } = opco.rateLimit;
    const spacing = windowMs / limit;
    const burstCalls = Math.max(1, Math.ceil(limit * BACKGROUND_HEADROOM));
    const view = this.views.get(opco.id);
    if (view && view.recent >= burstCalls) return Math.max(1, Math.ceil(Math.min(spacing, this.keptMs(opco, view))));
    const now = this.clock.now();
    const due = this.paced.get(opco.id) ?? now;
    if (due > now) return Math.ceil(due - now);
    this.paced.set(opco.id, now + spacing);
    if (view) view.recent += 1;
    return 0;
  }

  /** What `tenant`'s background work may do now (pace, headroom and fair share); `tenant` unknown: no share. */
  async turn(opco: ShareKey, tenant: string | undefined): Promise<BackgroundTurn> {
    const { limit } = opco.rateLimit;
    const { free } = await this.window(opco);
    if (free === 0) return 'wait';
    const shared = tenant === undefined ? undefined : await this.contention(opco, tenant);
    // While another tenant is active, the half holds from the tenant's first call.
    if (shared?.others && shared.mine >= Math.floor(limit / 2)) return 'wait';
    const lone = !shared?.others;
    const headroom = Math.max(1, Math.ceil(limit * BACKGROUND_HEADROOM));
    if (lone && free <= limit / 2 && free <= headroom) return 'wait';
    // Counted now, not once claimed: the worker's other steps deciding meanwhile see it, so one
    // tenant's concurrent steps cannot pass the half together. A turn not used (paced, or the
    // claim lost) is over-counted until the next read, a call's spacing later.
    if (shared) shared.mine += 1;
    // Paced below half while another tenant is active: each instance's count of the tenant's calls
    // is a moment old, and unpaced workers of several instances would pass the half before it shows.
    return lone && free > limit / 2 ? 'now' : 'paced';
  }

  /** How many slots of the window `tenant` holds, and whether another tenant is active in it (a slot or an ask). */
  private async contention(opco: ShareKey, tenant: string): Promise<Contention> {
    const key = `${opco.id}#${tenant}`;
    const now = this.clock.now();
    const kept = this.contentions.get(key);
    if (kept && now - kept.readAt < this.keptMs(opco, this.views.get(opco.id))) return kept;
    // Steps deciding at once share one read, and so one count to add their turns to.
    const reading = this.reading.get(key);
    if (reading) return reading;
    const read = this.readContention(opco, tenant, key, now).finally(() => this.reading.delete(key));
    this.reading.set(key, read);
    return read;
  }

  private async readContention(opco: ShareKey, tenant: string, key: string, now: number): Promise<Contention> {
    const since = new Date(freeBefore(now, opco.rateLimit.windowMs));
    const [mine, other, asks] = await Promise.all([
      this.slots.count({ opcoId: opco.id, usedAt: { $gt: since }, tenant }),
      this.slots.find({ opcoId: opco.id, usedAt: { $gt: since }, tenant: { $nin: [tenant, null] } }, { limit: 1 }),
      this.asks.find({ opcoId: opco.id, at: { $gt: since }, tenant: { $ne: tenant } }, { limit: 1 }),
    ]);
    const contention = { readAt: now, mine, others: other.length > 0 || asks.length > 0 };
    this.contentions.set(key, contention);
    if (this.contentions.size > 10_000) this.contentions.clear();
    return contention;
  }

  /** A slot this instance claimed: what it keeps counts it until the next read (the tenant's share counted it at its turn). */
  claimed(opco: ShareKey): void {
    const view = this.views.get(opco.id);
    if (view) view.free = Math.max(0, view.free - 1);
  }

  /**
   * What an instance read of the window is kept for: a call's spacing, within 25 to 250 ms; 250 ms
   * while the window was calm when read — under half of it used, even once the other instances
   * have claimed slots at the window's rate for 250 ms more — so no rule's answer changes before
   * then but by this instance's own claims, which it counts (the slots still bound every call).
   */
  private keptMs(opco: ShareKey, view: WindowView | undefined): number {
    const { limit, windowMs } = opco.rateLimit;
    if (view && view.used + (limit * KEPT_MAX_MS) / windowMs < limit / 2) return KEPT_MAX_MS;
    return Math.min(KEPT_MAX_MS, Math.max(KEPT_MIN_MS, windowMs / limit));
  }

  /** A client read of `tenant` found no slot: other tenants' background work yields to it. */
  async asked(opco: ShareKey, tenant: string): Promise<void> {
    const key = `${opco.id}#${tenant}`;
    const now = this.clock.now();
    if (now - (this.askedAt.get(key) ?? -Infinity) < 1000) return;
    this.askedAt.set(key, now);
    if (this.askedAt.size > 10_000) this.askedAt.clear();
    const expiresAt = new Date(now + 2 * opco.rateLimit.windowMs);
    await this.asks.findOneAndUpdate(
      { _id: key },
      { $set: { opcoId: opco.id, tenant, at: new Date(now), expiresAt } },
      { upsert: true },
    );
    this.views.delete(opco.id);
    this.contentions.clear();
  }

  sweep(): Promise<number> {
    return this.asks.sweepExpired(this.clock.date());
  }

  private async window(opco: ShareKey): Promise<WindowView> {
    const { limit, windowMs } = opco.rateLimit;
    const now = this.clock.now();
    const kept = this.views.get(opco.id);
    if (kept && now - kept.readAt < this.keptMs(opco, kept)) return kept;
    const burstMs = Math.max(1, Math.ceil(limit * BACKGROUND_HEADROOM)) * (windowMs / limit);
    const [used, recent] = await Promise.all([
      this.slots.count({ opcoId: opco.id, usedAt: { $gt: new Date(freeBefore(now, windowMs)) } }),
      this.slots.count({ opcoId: opco.id, usedAt: { $gt: new Date(now + callAllowanceMs(windowMs) - burstMs) } }),
    ]);
    const view = { readAt: now, used, free: Math.max(0, limit - used), recent };
    this.views.set(opco.id, view);
    return view;
  }
}
