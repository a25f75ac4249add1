/**
 * Waiting asks for upstream budget in the order D11 gives: lower priority number first
 * (client 1, default 5, sync and polling 10), and, within one priority, the CFA tenants taking
 * turns, so one tenant's bulk sync cannot starve another's. Used by the local bucket and by the
 * hub's grant scheduler alike.
 */

export interface FairEntry {
  priority: number;
  /** The CFA tenant (hash of its X-API-KEY) the ask is made for. */
  tenant: string;
}

export class FairQueue<T extends FairEntry> {
  /** priority -> tenant -> asks in arrival order; a Map keeps tenants in turn order. */
  private readonly levels = new Map<number, Map<string, T[]>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(entry: T): void {
    let tenants = this.levels.get(entry.priority);
    if (!tenants) {
      tenants = new Map();
      this.levels.set(entry.priority, tenants);
    }
    let asks = tenants.get(entry.tenant);
    if (!asks) {
      asks = [];
      tenants.set(entry.tenant, asks);
    }
    asks.push(entry);
    this.count += 1;
  }

  /** The next ask without removing it. */
  peek(): T | undefined {
    const tenants = this.firstLevel();
    return tenants?.values().next().value?.[0];
  }

  /** Removes and returns the next ask; its tenant goes to the back of its priority's turn. */
  shift(): T | undefined {
    const tenants = this.firstLevel();
    if (!tenants) return undefined;
    const [tenant, asks] = tenants.entries().next().value as [string, T[]];
    const entry = asks.shift()!;
    tenants.delete(tenant);
    if (asks.length > 0) tenants.set(tenant, asks);
    if (tenants.size === 0) this.levels.delete(entry.priority);
    this.count -= 1;
    return entry;
  }

  /** Removes one ask wherever it waits (cancelled, timed out); true when it was there. */
  remove(entry: T): boolean {
    const tenants = this.levels.get(entry.priority);
    const asks = tenants?.get(entry.tenant);
    const index = asks?.indexOf(entry) ?? -1;
    if (index < 0) return false;
    asks!.splice(index, 1);
    if (asks!.length === 0) tenants!.delete(entry.tenant);
    if (tenants!.size === 0) this.levels.delete(entry.priority);
    this.count -= 1;
    return true;
  }

  includes(entry: T): boolean {
    return this.levels.get(entry.priority)?.get(entry.tenant)?.includes(entry) ?? false;
  }

  /** Removes and returns every ask, in serving order. */
  drain(): T[] {
    const all: T[] = [];
    for (let entry = this.shift(); entry; entry = this.shift()) all.push(entry);
    return all;
  }

  private firstLevel(): Map<string, T[]> | undefined {
    let best: number | undefined;
    for (const priority of this.levels.keys()) if (best === undefined || priority < best) best = priority;
    return best === undefined ? undefined : this.levels.get(best);
  }
}
