/**
 * D11 between tenants in a worker (issue 38): one tenant's messages may hold at most a share of a
 * consumer's prefetch at once, so another tenant's message always finds a free slot instead of
 * waiting behind a bulk submission's long runs. A message over its tenant's share goes back to
 * its queue for a moment (the consumer's `requeue`), unrun; the jobs and sync workers use it alike.
 */
export class TenantSlots {
  private readonly running = new Map<string, number>();
  /** Slots one tenant may hold: `share` of `prefetch`, at least one. */
  readonly perTenant: number;

  constructor(prefetch: number, share: number) {
    this.perTenant = Math.max(1, Math.floor(prefetch * share));
  }

  /**
   * Runs `work` in a slot of `tenant`, or answers false (unrun) when the tenant holds its share.
   * A message that names no tenant (sent by an older version) always runs.
   */
  async run(tenant: string | undefined, work: () => Promise<void>): Promise<boolean> {
    if (tenant === undefined) {
      await work();
      return true;
    }
    const held = this.running.get(tenant) ?? 0;
    if (held >= this.perTenant) return false;
    this.running.set(tenant, held + 1);
    try {
      await work();
    } finally {
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left > 0) this.running.set(tenant, left);
      else this.running.delete(tenant);
    }
    return true;
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
