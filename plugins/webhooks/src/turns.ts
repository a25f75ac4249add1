/**
 * Who gets the delivery worker's next free slot (issue 38 point 4): tenants take turns, and
 * within a tenant its destinations (URL origins) take turns, so one tenant's dead receivers hold
 * its own deliveries and never another tenant's.
 *
 * - The worker has `slots` attempts at once. A free slot goes to the next tenant in turn (round
 *   robin) that has a delivery waiting and room for it; the tenant then goes to the back.
 * - The last `reserve` free slots go only to tenants with nothing in flight: a tenant already
 *   sending waits for a slot above them, so however many deliveries a tenant (or several) has
 *   stuck on receivers that never answer, a tenant with nothing in flight starts at once.
 *   This also bounds one tenant to `slots - reserve` attempts at once.
 * - At most `perOrigin` attempts at once for one tenant to one origin: a tenant's slow receiver
 *   leaves its other receivers room.
 *
 * Waiting deliveries are held by id only: their queue message is acknowledged, and the record,
 * due and unclaimed, is what a crash (or a tenant's backlog beyond `maxWaitingPerTenant`, left
 * here unheld) leaves for the overdue sweep to queue again (D25). An id already waiting or
 * running is not taken twice.
 */

export interface Turn {
  deliveryId: string;
  /** The tenant hash; `''` when the message did not say (it then waits with the others unknown). */
  tenant: string;
  /** The destination's origin; `''` when the message did not say. */
  origin: string;
  redelivered: boolean;
}

export interface TurnLimits {
  slots: number;
  /** Free slots kept for tenants with nothing in flight. */
  reserve: number;
  /** Attempts at once of one tenant to one origin. */
  perOrigin: number;
  /** Deliveries of one tenant held waiting; beyond, they are left to the overdue sweep. */
  maxWaitingPerTenant: number;
}

interface OriginLine {
  running: number;
  waiting: Turn[];
}

interface TenantLine {
  running: number;
  waiting: number;
  /** In turn order: the origin served last is at the back. */
  origins: Map<string, OriginLine>;
}

/** The default limits for a worker of `concurrency` slots: a quarter kept back, half per origin. */
export function turnLimits(concurrency: number): TurnLimits {
  return {
    slots: concurrency,
    reserve: concurrency < 2 ? 0 : Math.max(1, Math.floor(concurrency / 4)),
    perOrigin: Math.max(1, Math.ceil(concurrency / 2)),
    maxWaitingPerTenant: 5000,
  };
}

export class Turns {
  /** In turn order: the tenant served last is at the back. */
  private readonly tenants = new Map<string, TenantLine>();
  private readonly held = new Set<string>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly limits: TurnLimits,
    /** Runs one attempt; its slot is free again when the promise settles (it should not reject). */
    private readonly start: (turn: Turn) => Promise<void>,
  ) {}

  /**
   * Takes a delivery: started now if its tenant's turn allows, else kept waiting. False when it
   * was not taken (already held here, its tenant's backlog full, or stopped).
   */
  offer(turn: Turn): boolean {
    if (this.stopped || this.held.has(turn.deliveryId)) return false;
    const tenant = this.tenantLine(turn.tenant);
    if (tenant.waiting >= this.limits.maxWaitingPerTenant) return false;
    let origin = tenant.origins.get(turn.origin);
    if (!origin) {
      origin = { running: 0, waiting: [] };
      tenant.origins.set(turn.origin, origin);
    }
    origin.waiting.push(turn);
    tenant.waiting += 1;
    this.held.add(turn.deliveryId);
    this.pump();
    return true;
  }

  /** Whether the delivery is waiting or running here. */
  holds(deliveryId: string): boolean {
    return this.held.has(deliveryId);
  }

  /** Attempts running now, in all and for one tenant. */
  inFlight(tenant?: string): number {
    return tenant === undefined ? this.running : (this.tenants.get(tenant)?.running ?? 0);
  }

  /** Deliveries waiting for a slot, in all or for one tenant. */
  waiting(tenant?: string): number {
    if (tenant !== undefined) return this.tenants.get(tenant)?.waiting ?? 0;
    let count = 0;
    for (const line of this.tenants.values()) count += line.waiting;
    return count;
  }

  /** Starts nothing more and forgets what waits (its records stay due in the store). */
  stop(): void {
    this.stopped = true;
    for (const line of this.tenants.values()) {
      for (const origin of line.origins.values()) {
        for (const turn of origin.waiting) this.held.delete(turn.deliveryId);
        origin.waiting = [];
      }
      line.waiting = 0;
    }
  }

  /** Gives free slots to waiting deliveries, tenant by tenant in turn. */
  private pump(): void {
    while (!this.stopped && this.running < this.limits.slots) {
      const next = this.pick();
      if (!next) return;
      this.launch(next);
    }
  }

  private pick(): Turn | undefined {
    const free = this.limits.slots - this.running;
    for (const [name, tenant] of this.tenants) {
      if (tenant.waiting === 0) continue;
      // The reserved slots are for tenants with nothing in flight.
      if (tenant.running > 0 && free <= this.limits.reserve) continue;
      for (const [key, origin] of tenant.origins) {
        if (origin.waiting.length === 0 || origin.running >= this.limits.perOrigin) continue;
        const turn = origin.waiting.shift()!;
        tenant.waiting -= 1;
        // Served: to the back of their lines.
        tenant.origins.delete(key);
        tenant.origins.set(key, origin);
        this.tenants.delete(name);
        this.tenants.set(name, tenant);
        return turn;
      }
    }
    return undefined;
  }

  private launch(turn: Turn): void {
    const tenant = this.tenants.get(turn.tenant)!;
    const origin = tenant.origins.get(turn.origin)!;
    tenant.running += 1;
    origin.running += 1;
    this.running += 1;
    const done = () => {
      tenant.running -= 1;
      origin.running -= 1;
      this.running -= 1;
      this.held.delete(turn.deliveryId);
      if (origin.running === 0 && origin.waiting.length === 0 && tenant.origins.get(turn.origin) === origin)
        tenant.origins.delete(turn.origin);
      if (tenant.running === 0 && tenant.waiting === 0 && this.tenants.get(turn.tenant) === tenant)
        this.tenants.delete(turn.tenant);
      this.pump();
    };
    let started: Promise<void>;
    try {
      started = this.start(turn);
    } catch {
      started = Promise.resolve();
    }
    started.then(done, done);
  }

  private tenantLine(name: string): TenantLine {
    let line = this.tenants.get(name);
    if (!line) {
      line = { running: 0, waiting: 0, origins: new Map() };
      this.tenants.set(name, line);
    }
    return line;
  }
}
