/**
 * D11 between tenants in a worker (issue 38): one tenant's messages may hold at most a share of a
 * consumer's prefetch at once, so another tenant's message always finds a free slot instead of
 * waiting behind a bulk submission's long runs; the jobs and sync workers use it alike.
 *
 * A message over its tenant's share first waits here, unacknowledged, for one of that tenant's
 * slots (`waitMs`): a lone tenant's short jobs then flow without a detour through the queue. A
 * wait that runs out means the tenant's slots are held by long work: its message goes back to
 * the queue for a moment (the consumer's `requeue`), unrun, and so do its next ones at once until
 * one of its slots frees, so the prefetch positions it would block go to other tenants' messages.
 */
import { systemClock, type Clock } from '../clock.js';

/** How long a message over its tenant's share waits for one of the tenant's slots before it is turned back. */
export const SLOT_WAIT_MS = 2000;

export class TenantSlots {
  private readonly running = new Map<string, number>();
  /** Messages over their tenant's share waiting for its next free slot, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Tenants whose last wait ran out: until one of their slots frees, their messages turn back at once. */
  private readonly saturated = new Set<string>();
  /** Slots one tenant may hold: `share` of `prefetch`, at least one. */
  readonly perTenant: number;

  constructor(
    prefetch: number,
    share: number,
    private readonly clock: Clock = systemClock,
    private readonly waitMs = SLOT_WAIT_MS,
  ) {
    this.perTenant = Math.max(1, Math.floor(prefetch * share));
  }

  /**
   * Runs `work` in a slot of `tenant`, or answers false (unrun) when the tenant holds its share
   * and no slot of it freed in time. A message that names no tenant (sent by an older version)
   * always runs.
   */
  async run(tenant: string | undefined, work: () => Promise<void>): Promise<boolean> {
    if (tenant === undefined) {
      await work();
      return true;
    }
    if (!(await this.take(tenant))) return false;
    try {
      await work();
    } finally {
      this.give(tenant);
    }
    return true;
  }

  private take(tenant: string): boolean | Promise<boolean> {
    const held = this.running.get(tenant) ?? 0;
    if (held < this.perTenant) {
      this.running.set(tenant, held + 1);
      return true;
    }
    if (this.saturated.has(tenant) || this.waitMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const queue = this.waiting.get(tenant) ?? [];
      this.waiting.set(tenant, queue);
      const handOver = () => {
        timer.cancel();
        resolve(true);
      };
      const timer = this.clock.setTimeout(() => {
        const at = queue.indexOf(handOver);
        if (at < 0) return;
        queue.splice(at, 1);
        if (queue.length === 0) this.waiting.delete(tenant);
        this.saturated.add(tenant);
        resolve(false);
      }, this.waitMs);
      queue.push(handOver);
    });
  }

  /** A slot of `tenant` freed: its first waiting message takes it over, else the count drops. */
  private give(tenant: string): void {
    this.saturated.delete(tenant);
    const queue = this.waiting.get(tenant);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(tenant);
    if (next) return next();
    const left = (this.running.get(tenant) ?? 1) - 1;
    if (left > 0) this.running.set(tenant, left);
    else this.running.delete(tenant);
  }
}

/**
 * When a tenant holds its share of a worker's slots, its next message comes back this much later,
 * doubled each time the same message is turned back (`turns`), up to 30 s: a backlog of one tenant
 * costs a publish and an ack per message per turn, not a spin through it.
 */
export function overShareDelayMs(turns: number): number {
  return Math.min(30_000, 500 * 2 ** Math.min(turns, 6));
}
