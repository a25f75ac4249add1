/**
 * D11 without a hub (issue 38): how the store budget shares a window between tenants. The hub
 * serves waiting asks by priority and by turns between tenants; the store budget has no one to
 * queue at, so it gets the same effect from three rules every instance applies to its own
 * background work (jobs, sync batches, polls) from what the store says of the window:
 *
 * - **pace**: background calls of an opcoId start at most at the window's rate
 *   (`limit / windowMs`, a tenth of the window in a burst), per instance. A bulk job alone then
 *   fills the window gradually, and slots leave it as gradually, instead of all at once a window
 *   after a burst: a client read that comes meanwhile finds one within a call's spacing;
 * - **headroom**: background work alone never takes the last tenth of the window, so a client
 *   read of another tenant finds a free slot at once (its own reads take any slot);
 * - **fair share**: once other tenants are active at that opcoId (a slot of theirs in the window,
 *   or a read of theirs refused or waiting for budget: an `ask`), a tenant's background work may go
 *   into that last tenth only while it holds less than `limit / active tenants` of the window.
 *
 * What each instance reads of the window is kept for a call's spacing, so the check costs a store
 * read per spacing, not per call. The slots say whose call they hold (`tenant`); asks are one
 * document per opcoId and tenant, written at most once a second.
 */
import type { Collection, Store } from '../ports/store.js';
import type { Clock } from '../clock.js';

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
  free: number;
  byTenant: Map<string, number>;
  asking: Set<string>;
}

/** Share of the window kept free by background work, and the burst of its pacing. */
export const BACKGROUND_HEADROOM = 0.1;

export class BudgetShare {
  private readonly asks: Collection<Ask>;
  /** Per opcoId: the theoretical arrival time of the next paced background call (GCRA). */
  private readonly paced = new Map<string, number>();
  private readonly views = new Map<string, WindowView>();
  private readonly askedAt = new Map<string, number>();

  constructor(
    store: Store,
    private readonly slots: Collection<SlotView & { _id: string; opcoId: string }>,
    private readonly clock: Clock,
  ) {
    this.asks = store.collection<Ask>('upstream_budget_asks');
  }

  /** ms before this instance may start another background call of the opcoId; 0 takes the turn. */
  paceWait(opco: ShareKey): number {
    const { limit, windowMs } = opco.rateLimit;
    const spacing = windowMs / limit;
    const burst = Math.max(1, Math.ceil(limit * BACKGROUND_HEADROOM)) * spacing;
    const now = this.clock.now();
    const due = Math.max(this.paced.get(opco.id) ?? now, now);
    if (due - now >= burst) return Math.ceil(due - now - burst + 1);
    this.paced.set(opco.id, due + spacing);
    return 0;
  }

  /** Whether `tenant`'s background work may claim a slot now (headroom and fair share). */
  async mayClaim(opco: ShareKey, tenant: string): Promise<boolean> {
    const { limit } = opco.rateLimit;
    const view = await this.window(opco);
    const headroom = Math.max(1, Math.ceil(limit * BACKGROUND_HEADROOM));
    if (view.free > headroom) return true;
    const active = new Set([...view.byTenant.keys(), ...view.asking, tenant]);
    if (active.size === 1 || view.free === 0) return false;
    return (view.byTenant.get(tenant) ?? 0) < Math.floor(limit / active.size);
  }

  /** A slot this instance claimed: the view it keeps counts it until the next read. */
  claimed(opco: ShareKey, tenant: string | undefined): void {
    const view = this.views.get(opco.id);
    if (!view) return;
    view.free = Math.max(0, view.free - 1);
    if (tenant) view.byTenant.set(tenant, (view.byTenant.get(tenant) ?? 0) + 1);
  }

  /** A client read of `tenant` found no slot: other tenants' background work yields to it. */
  async asked(opco: ShareKey, tenant: string): Promise<void> {
    const key = `${opco.id}#${tenant}`;
    const now = this.clock.now();
    if (now - (this.askedAt.get(key) ?? -Infinity) < 1000) return;
    this.askedAt.set(key, now);
    if (this.askedAt.size > 10_000) this.askedAt.clear();
    const expiresAt = new Date(now + 2 * opco.rateLimit.windowMs);
    await this.asks.findOneAndUpdate({ _id: key }, { $set: { opcoId: opco.id, tenant, at: new Date(now), expiresAt } }, { upsert: true });
    this.views.delete(opco.id);
  }

  sweep(): Promise<number> {
    return this.asks.sweepExpired(this.clock.date());
  }

  private async window(opco: ShareKey): Promise<WindowView> {
    const { limit, windowMs } = opco.rateLimit;
    const now = this.clock.now();
    const kept = this.views.get(opco.id);
    if (kept && now - kept.readAt < Math.min(250, windowMs / limit)) return kept;
    const since = new Date(now - windowMs);
    const [inWindow, asks] = await Promise.all([
      this.slots.find({ opcoId: opco.id, usedAt: { $gt: since } }),
      this.asks.find({ opcoId: opco.id, at: { $gt: since } }, { limit: 100 }),
    ]);
    const byTenant = new Map<string, number>();
    for (const slot of inWindow) if (slot.tenant) byTenant.set(slot.tenant, (byTenant.get(slot.tenant) ?? 0) + 1);
    const view = { readAt: now, free: Math.max(0, limit - inWindow.length), byTenant, asking: new Set(asks.map((ask) => ask.tenant)) };
    this.views.set(opco.id, view);
    return view;
  }
}
