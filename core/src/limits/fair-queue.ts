/**
 * Waiting asks for upstream budget in the order D11 gives: lower priority number first
 * (client 1, default 5, sync and polling 10), and, within one priority, the CFA tenants taking
 * turns, so one tenant's bulk sync cannot starve another's. Used by the local bucket and by the
 * hub's grant scheduler alike, through LaneQueue.
 */

export interface FairEntry {
  priority: number;
  /** The CFA tenant (hash of its X-API-KEY) the ask is made for. */
  tenant: string;
}

interface Turn<T> {
  /** When the tenant last went to the back of its priority's turn; comparable across the FairQueues of one LaneQueue. */
  since: number;
  asks: T[];
}

function turnCounter(): () => number {
  let last = 0;
  return () => ++last;
}

export class FairQueue<T extends FairEntry> {
  /** priority -> tenant -> its turn and asks in arrival order; a Map keeps tenants in turn order. */
  private readonly levels = new Map<number, Map<string, Turn<T>>>();
  private count = 0;

  /** `nextTurn` is shared by queues whose turns are compared (LaneQueue). */
  constructor(private readonly nextTurn: () => number = turnCounter()) {}

  get size(): number {
    return this.count;
  }

  push(entry: T): void {
    let tenants = this.levels.get(entry.priority);
    if (!tenants) {
      tenants = new Map();
      this.levels.set(entry.priority, tenants);
    }
    let turn = tenants.get(entry.tenant);
    if (!turn) {
      turn = { since: this.nextTurn(), asks: [] };
      tenants.set(entry.tenant, turn);
    }
    turn.asks.push(entry);
    this.count += 1;
  }

  /** The next ask without removing it. */
  peek(): T | undefined {
    const tenants = this.firstLevel();
    return tenants?.values().next().value?.asks[0];
  }

  /** Priority and turn of the next ask: of two queues sharing `nextTurn`, the lower one is served first. */
  head(): { priority: number; since: number } | undefined {
    const tenants = this.firstLevel();
    const turn = tenants?.values().next().value;
    return turn && { priority: turn.asks[0].priority, since: turn.since };
  }

  /** Removes and returns the next ask; its tenant goes to the back of its priority's turn. */
  shift(): T | undefined {
    const tenants = this.firstLevel();
    if (!tenants) return undefined;
    const [tenant, turn] = tenants.entries().next().value as [string, Turn<T>];
    const entry = turn.asks.shift()!;
    tenants.delete(tenant);
    if (turn.asks.length > 0) tenants.set(tenant, { since: this.nextTurn(), asks: turn.asks });
    if (tenants.size === 0) this.levels.delete(entry.priority);
    this.count -= 1;
    return entry;
  }

  /** Removes one ask wherever it waits (cancelled, timed out); true when it was there. */
  remove(entry: T): boolean {
    const tenants = this.levels.get(entry.priority);
    const asks = tenants?.get(entry.tenant)?.asks;
    const index = asks?.indexOf(entry) ?? -1;
    if (index < 0) return false;
    asks!.splice(index, 1);
    if (asks!.length === 0) tenants!.delete(entry.tenant);
    if (tenants!.size === 0) this.levels.delete(entry.priority);
    this.count -= 1;
    return true;
  }

  includes(entry: T): boolean {
    return this.levels.get(entry.priority)?.get(entry.tenant)?.asks.includes(entry) ?? false;
  }

  /** Removes and returns every ask, in serving order. */
  drain(): T[] {
    const all: T[] = [];
    for (let entry = this.shift(); entry; entry = this.shift()) all.push(entry);
    return all;
  }

  private firstLevel(): Map<string, Turn<T>> | undefined {
    let best: number | undefined;
    for (const priority of this.levels.keys()) if (best === undefined || priority < best) best = priority;
    return best === undefined ? undefined : this.levels.get(best);
  }
}

/** An ask that says whether the upstream has accepted its tenant's key lately (issue 27). */
export interface LaneEntry extends FairEntry {
  proven: boolean;
}

/**
 * Asks of proven and unproven tenants (issue 27), served in D11's order as one FairQueue would
 * serve them all, except that the unproven ones are passed over while their slice of the budget
 * is full: an unproven ask that cannot go never holds back a proven ask behind it, and keeps its
 * place for when the slice has room. Two FairQueues sharing one turn counter, so that which of
 * their two next asks goes first is decided as in a single queue (priority, then turn).
 */
export class LaneQueue<T extends LaneEntry> {
  private readonly proven: FairQueue<T>;
  private readonly unproven: FairQueue<T>;

  constructor() {
    const nextTurn = turnCounter();
    this.proven = new FairQueue<T>(nextTurn);
    this.unproven = new FairQueue<T>(nextTurn);
  }

  get size(): number {
    return this.proven.size + this.unproven.size;
  }

  /** Asks of unproven tenants waiting. */
  get unprovenSize(): number {
    return this.unproven.size;
  }

  push(entry: T): void {
    this.lane(entry).push(entry);
  }

  /** The next ask that may go: an unproven one only when `unprovenMayGo` (its slice has room). */
  shift(unprovenMayGo: boolean): T | undefined {
    return this.next(unprovenMayGo)?.shift();
  }

  remove(entry: T): boolean {
    return this.lane(entry).remove(entry);
  }

  includes(entry: T): boolean {
    return this.lane(entry).includes(entry);
  }

  /** Removes and returns every ask, in serving order. */
  drain(): T[] {
    const all: T[] = [];
    for (let entry = this.shift(true); entry; entry = this.shift(true)) all.push(entry);
    return all;
  }

  private lane(entry: T): FairQueue<T> {
    return entry.proven ? this.proven : this.unproven;
  }

  private next(unprovenMayGo: boolean): FairQueue<T> | undefined {
    const proven = this.proven.head();
    const unproven = unprovenMayGo ? this.unproven.head() : undefined;
    if (!unproven) return proven && this.proven;
    if (!proven) return this.unproven;
    const provenFirst =
      proven.priority < unproven.priority || (proven.priority === unproven.priority && proven.since < unproven.since);
    return provenFirst ? this.proven : this.unproven;
  }
}
