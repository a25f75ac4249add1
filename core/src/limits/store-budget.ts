/**
 * Pipeline step 4 without a hub (SPEC 1.1, D11, D12), the default admission provider: one budget
 * per opcoId shared by every tenant and every instance through the Store.
 *
 * The budget is `limit` slot documents. A call claims, atomically, a slot last used at least
 * `windowMs` ago, stamping it with the claim time plus a small allowance for the call itself; a
 * call that outlasts the allowance stamps the slot again with its end. The upstream counts a call
 * somewhere between its start and its end, so a slot stamped no earlier than the end serves at
 * most one call per window as the upstream sees it: no rolling window ever sees more than `limit`
 * calls, whichever instance made them. It needs only findOneAndUpdate, which every Store offers.
 * The allowance spares most calls their second write (one store round trip per call instead of
 * two) at the cost of at most `CALL_ALLOWANCE_SHARE` of the budget when calls are much faster.
 */
import { DuplicateKeyError, type Store, type Collection } from '../ports/store.js';
import { createError } from '../errors/errors.js';
import { randomHex } from '../crypto/crypto.js';
import { PRIORITY } from '../pipeline/call-context.js';
import type { Clock } from '../clock.js';
import type { AdmissionLease, AdmissionProvider, AdmissionRequest, AdmissionState } from './admission.js';
import { BudgetShare, callAllowanceMs } from './budget-share.js';
import { freeBefore, leavesWindowAt } from './rolling-window.js';

/** What the budget needs to know of an opco. */
export interface BudgetKey {
  id: string;
  rateLimit: { limit: number; windowMs: number };
}

interface Slot {
  _id: string;
  opcoId: string;
  index: number;
  usedAt: Date;
  holder?: string;
  /** The last claim was an unproven tenant's. */
  unproven?: boolean;
  /** Whose call the last claim was for (budget-share.ts). */
  tenant?: string;
}

export interface BudgetLease {
  release(): Promise<void>;
}

/** The default provider of the admission seam: clients refused with 429 when exhausted, background work waits. */
export class StoreBudgetAdmission implements AdmissionProvider {
  readonly name = 'store-budget';

  constructor(private readonly budget: UpstreamBudget) {}

  async admit(request: AdmissionRequest): Promise<AdmissionLease> {
    const opco = { id: request.opcoId, rateLimit: request.rateLimit };
    const lane: Lane = { proven: request.proven, unprovenLimit: request.unprovenLimit };
    const lease = request.synchronous
      ? await this.budget.acquire(opco, request.priority, lane, request.tenant)
      : await this.budget.acquireWaiting(
          opco,
          request.priority,
          request.cancelled,
          lane,
          request.tenant,
          request.deferrable ? BACKGROUND_HOLD_MS : undefined,
        );
    if (!lease) throw createError('UNAVAILABLE', 'the work was cancelled while waiting for upstream budget');
    return { headers: {}, release: () => lease.release() };
  }

  /** Calls of every instance are in the slots; who waits is known to each instance alone. */
  async describe(opco: BudgetKey & { unprovenLimit: number }): Promise<AdmissionState> {
    const { used, nextFreeInMs, unprovenUsed } = await this.budget.standing(opco, opco.unprovenLimit);
    return {
      provider: this.name,
      used,
      waiting: null,
      nextFreeInMs,
      unproven: { limit: opco.unprovenLimit, used: unprovenUsed, waiting: null },
    };
  }
}

/**
 * Whose call a slot is claimed for (issue 27): a proven tenant may take any slot; unproven
 * tenants share the last `unprovenLimit` slots, so invented keys can spend that slice of each
 * window and no more. No one waits in line behind them: a claim only ever tries its own slots.
 */
export interface Lane {
  proven: boolean;
  unprovenLimit: number;
}

const PROVEN: Lane = { proven: true, unprovenLimit: 0 };

/**
 * Share of the budget that background work (priority above PRIORITY.client) leaves free for
 * client requests (D11): a sync uses what clients leave over, and clients are not starved.
 */
export const CLIENT_RESERVE = 0.1;

export { CALL_ALLOWANCE_MAX_MS, CALL_ALLOWANCE_SHARE } from './budget-share.js';
/**
 * How long deferrable background work (a job step) waits for budget in the worker before it is
 * handed back with Retry-After, so that a step waiting for budget does not hold a worker slot.
 */
export const BACKGROUND_HOLD_MS = 1000;
/** The longest a client read waits for a slot that frees soon, instead of a 429 at once. */
export const CLIENT_WAIT_MAX_MS = 2000;

export class UpstreamBudget {
  private readonly slots: Collection<Slot>;
  private readonly prepared = new Map<string, Promise<void>>();
  /**
   * Where this process stands in the rotation of each opco's slots (SlotRotation). Slots are
   * claimed in rotation, so the next one is nearly always free, and trying it first touches one
   * document by _id instead of searching every slot of the opco: on the embedded store (nedb
   * scans them) and on FerretDB (which filters in its own process) that search is most of a
   * claim's cost, and on MongoDB concurrent claims no longer all race for the oldest slot. When
   * another instance has used the slot, the guess misses and the search follows: a second round
   * trip, which also brings this instance's rotation back to the oldest slots.
   */
  private readonly rotations = new Map<string, SlotRotation>();
  /**
   * When, at the earliest, a slot of an opco (of an index or more) leaves the window, as last
   * read. Every instance only ever stamps slots later, so until then no claim can succeed: a
   * client retrying against a spent budget is refused without a search of every slot per request
   * (measured: 350 µs of CPU per refusal at 60 slots, 2.5 ms at 1,000). The one exception, a
   * limit raised by another instance's config, adds free slots this one, on its old and lower
   * limit, may then leave unused for up to a window.
   */
  private readonly spentUntil = new Map<string, number>();
  /** D11 between tenants without a hub: pacing, headroom and fair shares of background work. */
  readonly share: BudgetShare;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.slots = store.collection<Slot>('upstream_budget');
    this.share = new BudgetShare(store, this.slots, clock);
  }

  /**
   * Claims a slot or throws RATE_LIMITED with the seconds until the next one frees. A slot that
   * frees within two calls' spacing (at most CLIENT_WAIT_MAX_MS) is waited for; meanwhile the
   * tenant's ask makes other tenants' background work yield to it (budget-share.ts).
   */
  async acquire(
    opco: BudgetKey,
    priority: number = PRIORITY.client,
    lane: Lane = PROVEN,
    tenant?: string,
  ): Promise<BudgetLease> {
    const first = await this.tryAcquire(opco, priority, lane, tenant);
    if (first) return first;
    if (tenant !== undefined) await this.share.asked(opco, tenant);
    const fromIndex = lane.proven ? 0 : opco.rateLimit.limit - lane.unprovenLimit;
    const deadline =
      this.clock.now() + Math.min(CLIENT_WAIT_MAX_MS, (2 * opco.rateLimit.windowMs) / opco.rateLimit.limit);
    for (
      let soon = await this.msUntilFree(opco, fromIndex);
      this.clock.now() + soon <= deadline;
      soon = await this.msUntilFree(opco, fromIndex)
    ) {
      await this.clock.sleep(Math.max(soon, 5) + Math.random() * 10);
      const lease = await this.tryAcquire(opco, priority, lane, tenant);
      if (lease) return lease;
    }
    const waitMs = await this.msUntilFree(opco, fromIndex);
    const what = lane.proven
      ? `upstream budget of ${opco.id} exhausted`
      : `the share of ${opco.id}'s upstream budget left to API keys the upstream has not accepted yet is exhausted`;
    throw createError(
      'RATE_LIMITED',
      `${what} (${lane.proven ? opco.rateLimit.limit : lane.unprovenLimit} calls per ${opco.rateLimit.windowMs} ms)`,
      {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) },
      },
    );
  }

  /**
   * Waits for a slot, however long, checking `cancelled` between tries: background work is
   * never refused, it is only late (SPEC 1.1 step 4 for work that is not a client's request).
   */
  async acquireWaiting(
    opco: BudgetKey,
    priority: number,
    cancelled: () => boolean | Promise<boolean> = () => false,
    lane: Lane = PROVEN,
    tenant?: string,
    deferAfterMs?: number,
  ): Promise<BudgetLease | null> {
    const started = this.clock.now();
    for (;;) {
      const waitMs = await this.tryWaiting(opco, priority, lane, tenant);
      if (typeof waitMs !== 'number') return waitMs;
      if (deferAfterMs !== undefined && this.clock.now() - started + waitMs > deferAfterMs) {
        throw createError('RATE_LIMITED', `upstream budget of ${opco.id} is in use; the work waits its turn`, {
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) },
        });
      }
      // Short naps with jitter: waiting instances do not all wake on the same millisecond,
      // and a cancellation is noticed within a quarter of a second.
      await this.clock.sleep(Math.min(Math.max(waitMs, 5), 250) + Math.random() * 20);
      if (await cancelled()) return null;
    }
  }

  /** One try of background work: its lease, or how long to wait before the next try. */
  private async tryWaiting(
    opco: BudgetKey,
    priority: number,
    lane: Lane,
    tenant: string | undefined,
  ): Promise<BudgetLease | number> {
    const turn = await this.share.turn(opco, tenant);
    if (turn === 'wait') return Math.max(50, await this.msUntilFree(opco));
    const paceMs = turn === 'paced' ? this.share.paceWait(opco) : 0;
    if (paceMs > 0) return paceMs;
    const lease = await this.tryAcquire(opco, priority, lane, tenant);
    if (lease) {
      this.share.claimed(opco);
      return lease;
    }
    return this.msUntilFree(opco);
  }

  /**
   * One store round trip: the claim itself. The first `reserve` slots (by index) are for client
   * requests only, so background work never needs to count the free slots first (D11); the last
   * `unprovenLimit` are the only ones an unproven tenant's call may take (Lane).
   */
  async tryAcquire(
    opco: BudgetKey,
    priority: number = PRIORITY.client,
    lane: Lane = PROVEN,
    tenant?: string,
  ): Promise<BudgetLease | null> {
    await this.prepare(opco);
    const holder = randomHex(8);
    const now = this.clock.now();
    const freeSince = new Date(freeBefore(now, opco.rateLimit.windowMs));
    const clientReserve = priority > PRIORITY.client ? Math.floor(opco.rateLimit.limit * CLIENT_RESERVE) : 0;
    // The slice is the last slots; the rotation, which guesses among all, is for proven calls.
    const reserve = lane.proven ? clientReserve : Math.max(clientReserve, opco.rateLimit.limit - lane.unprovenLimit);
    if (this.knownSpentUntil(opco, reserve) > now) return null;
    const stampedUntil = now + callAllowanceMs(opco.rateLimit.windowMs);
    // A slice slot says whose call it holds, so operators see how much of the slice is in use.
    const claim = {
      $set: { usedAt: new Date(stampedUntil), holder, unproven: !lane.proven, ...(tenant !== undefined && { tenant }) },
    };
    const rotation = this.rotationOf(opco);
    const guess = lane.proven ? rotation.guess(reserve, freeSince.getTime()) : undefined;
    let slot: Slot | null = null;
    if (guess !== undefined) {
      slot = await this.slots.findOneAndUpdate(
        { _id: `${opco.id}#${guess}`, opcoId: opco.id, usedAt: { $lte: freeSince } },
        claim,
      );
    }
    if (!slot) {
      // Unproven calls take the last slots first: those the narrow slice also holds, so a call
      // made while the slice was wide still counts against it once it narrows (tenant-standing.ts).
      slot = await this.slots.findOneAndUpdate(
        reserve > 0
          ? { opcoId: opco.id, index: { $gte: reserve }, usedAt: { $lte: freeSince } }
          : { opcoId: opco.id, usedAt: { $lte: freeSince } },
        claim,
        lane.proven ? undefined : { sort: { index: -1 } },
      );
      if (!slot) return null;
      if (lane.proven) rotation.continueAfter(slot.index);
    }
    rotation.stamped(slot.index, stampedUntil);
    return {
      release: async () => {
        const end = this.clock.now();
        if (end <= stampedUntil) return;
        // updateMany on an _id matches one document at most; unlike findOneAndUpdate it reads
        // nothing back, which on the embedded store saves a lookup and a copy per call.
        await this.slots.updateMany({ _id: slot._id, holder }, { $set: { usedAt: new Date(end) } });
        rotation.stamped(slot.index, end);
      },
    };
  }

  private rotationOf(opco: BudgetKey): SlotRotation {
    let rotation = this.rotations.get(opco.id);
    if (rotation?.limit !== opco.rateLimit.limit) {
      rotation = new SlotRotation(opco.rateLimit.limit);
      this.rotations.set(opco.id, rotation);
    }
    return rotation;
  }

  /** Slots used in the current window, by every instance, and how long until one is free. */
  async standing(
    opco: BudgetKey,
    unprovenLimit = 0,
  ): Promise<{ used: number; nextFreeInMs: number; unprovenUsed: number }> {
    const freeSince = new Date(freeBefore(this.clock.now(), opco.rateLimit.windowMs));
    const { limit } = opco.rateLimit;
    const [inWindow, inSlice] = await Promise.all([
      this.slots.count({ opcoId: opco.id, usedAt: { $gt: freeSince } }),
      unprovenLimit > 0
        ? this.slots.count({
            opcoId: opco.id,
            usedAt: { $gt: freeSince },
            index: { $gte: limit - unprovenLimit },
            unproven: true,
          })
        : 0,
    ]);
    const used = Math.min(inWindow, limit);
    return { used, nextFreeInMs: used < limit ? 0 : await this.msUntilFree(opco), unprovenUsed: inSlice };
  }

  /** How long until some slot (of index `fromIndex` or more) leaves the window; 0 when one is free now. */
  async msUntilFree(opco: BudgetKey, fromIndex = 0): Promise<number> {
    const known = this.knownSpentUntil(opco, fromIndex);
    if (known > this.clock.now()) return known - this.clock.now();
    const filter = fromIndex > 0 ? { opcoId: opco.id, index: { $gte: fromIndex } } : { opcoId: opco.id };
    const [oldest] = await this.slots.find(filter, { sort: { usedAt: 1 }, limit: 1 });
    if (!oldest) return 0;
    const freeAt = leavesWindowAt(oldest.usedAt.getTime(), opco.rateLimit.windowMs);
    if (this.spentUntil.size > 10_000) this.spentUntil.clear();
    this.spentUntil.set(spentKey(opco, fromIndex), freeAt);
    return Math.max(0, freeAt - this.clock.now());
  }

  /** No slot of index `fromIndex` or more is free before this (what the whole budget's reading bounds too). */
  private knownSpentUntil(opco: BudgetKey, fromIndex: number): number {
    const whole = this.spentUntil.get(spentKey(opco, 0)) ?? 0;
    return fromIndex > 0 ? Math.max(whole, this.spentUntil.get(spentKey(opco, fromIndex)) ?? 0) : whole;
  }

  /** Creates the opco's slots once per process; concurrent instances may race, which is harmless. */
  private prepare(opco: BudgetKey): Promise<void> {
    const key = `${opco.id}:${opco.rateLimit.limit}`;
    let ready = this.prepared.get(key);
    if (!ready) {
      ready = this.createSlots(opco).catch((err) => {
        this.prepared.delete(key);
        throw err;
      });
      this.prepared.set(key, ready);
    }
    return ready;
  }

  private async createSlots(opco: BudgetKey): Promise<void> {
    // A search hint: the embedded store skips it (IndexOptions), where it would serve no claim.
    await this.slots.createIndex({ opcoId: 1, usedAt: 1 });
    const { limit } = opco.rateLimit;
    await Promise.all(
      Array.from({ length: limit }, (_, index) =>
        this.slots
          .findOneAndUpdate(
            { _id: `${opco.id}#${index}` },
            { $setOnInsert: { opcoId: opco.id, index, usedAt: new Date(0) } },
            { upsert: true },
          )
          .catch((err) => {
            if (!(err instanceof DuplicateKeyError)) throw err;
          }),
      ),
    );
    // A lowered limit must not leave extra slots behind.
    await this.slots.deleteMany({ opcoId: opco.id, index: { $gte: limit } });
  }
}

const spentKey = (opco: BudgetKey, fromIndex: number) =>
  `${opco.id}:${opco.rateLimit.limit}:${opco.rateLimit.windowMs}#${fromIndex}`;

/**
 * This process's place in the rotation of one opco's slots, and the stamps it wrote itself. A
 * slot's stamp only ever moves later, so a slot this process stamped inside the window is known to
 * be used: guessing it would be a sure miss, a round trip for nothing. That happens whenever a
 * search's answer comes back after claims this process made meanwhile: the rotation goes on
 * after the slot the search found, which those claims may have taken (the first two claims of a
 * worker with prefetch > 1 both search; the later answer pointed the rotation at the other's
 * slot, and the next claim missed). The guess skips such slots.
 */
class SlotRotation {
  /** The slot to try next; none before the first search. */
  private next: number | undefined;
  /** Per slot, the latest stamp this process wrote (ms), 0 for none. */
  private readonly stamps: Float64Array;

  constructor(readonly limit: number) {
    this.stamps = new Float64Array(limit);
  }

  /**
   * The next slot of the rotation not known to be used (stamped after `freeSince`), the rotation
   * moved past it before the round trip, so concurrent claims of this process try distinct
   * slots; undefined when there is none to try, or it is one of the first `reserve` (left to the
   * search).
   */
  guess(reserve: number, freeSince: number): number | undefined {
    if (this.next === undefined) return undefined;
    for (let step = 0; step < this.limit; step++) {
      const index = (this.next + step) % this.limit;
      if (this.stamps[index] > freeSince) continue;
      if (index < reserve) return undefined;
      this.next = (index + 1) % this.limit;
      return index;
    }
    return undefined;
  }

  /** A search claimed `index`: the rotation goes on from the slot after it. */
  continueAfter(index: number): void {
    this.next = (index + 1) % this.limit;
  }

  stamped(index: number, until: number): void {
    this.stamps[index] = Math.max(this.stamps[index], until);
  }
}
