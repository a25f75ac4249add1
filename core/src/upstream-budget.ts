/**
 * Pipeline step 4 without a hub (SPEC 1.1, D11, D12), the default admission provider: one budget
 * per opcoId shared by every tenant and every instance through the Store.
 *
 * The budget is `limit` slot documents. A call claims, atomically, a slot last used at least
 * `windowMs` ago, and on release the slot is stamped again with the call's end. A slot thus
 * serves at most one call per window, so no rolling window ever sees more than `limit` calls,
 * whichever instance made them. It needs only findOneAndUpdate, which every Store offers.
 */
import { DuplicateKeyError, type Store, type Collection } from './ports/store.js';
import { createError } from './errors.js';
import { randomHex } from './crypto.js';
import { PRIORITY } from './call-context.js';
import type { Clock } from './clock.js';
import type { AdmissionLease, AdmissionProvider, AdmissionRequest } from './admission/admission.js';

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
    const lease = request.synchronous
      ? await this.budget.acquire(opco, request.priority)
      : await this.budget.acquireWaiting(opco, request.priority, request.cancelled);
    if (!lease) throw createError('UNAVAILABLE', 'the work was cancelled while waiting for upstream budget');
    return { headers: {}, release: () => lease.release() };
  }
}

/**
 * Share of the budget that background work (priority above PRIORITY.client) leaves free for
 * client requests (D11): a sync uses what clients leave over, and clients are not starved.
 */
export const CLIENT_RESERVE = 0.1;

export class UpstreamBudget {
  private readonly slots: Collection<Slot>;
  private readonly prepared = new Map<string, Promise<void>>();

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.slots = store.collection<Slot>('upstream_budget');
  }

  /** Claims a slot or throws RATE_LIMITED with the seconds until the next one frees. */
  async acquire(opco: BudgetKey, priority: number = PRIORITY.client): Promise<BudgetLease> {
    const lease = await this.tryAcquire(opco, priority);
    if (lease) return lease;
    const waitMs = await this.msUntilFree(opco);
    throw createError('RATE_LIMITED', `upstream budget of ${opco.id} exhausted (${opco.rateLimit.limit} calls per ${opco.rateLimit.windowMs} ms)`, {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) },
    });
  }

  /**
   * Waits for a slot, however long, checking `cancelled` between tries: background work is
   * never refused, it is only late (SPEC 1.1 step 4 for work that is not a client's request).
   */
  async acquireWaiting(opco: BudgetKey, priority: number, cancelled: () => boolean | Promise<boolean> = () => false): Promise<BudgetLease | null> {
    for (;;) {
      const lease = await this.tryAcquire(opco, priority);
      if (lease) return lease;
      const waitMs = await this.msUntilFree(opco);
      // Short naps with jitter: waiting instances do not all wake on the same millisecond,
      // and a cancellation is noticed within a quarter of a second.
      await this.clock.sleep(Math.min(Math.max(waitMs, 5), 250) + Math.random() * 20);
      if (await cancelled()) return null;
    }
  }

  async tryAcquire(opco: BudgetKey, priority: number = PRIORITY.client): Promise<BudgetLease | null> {
    await this.prepare(opco);
    const holder = randomHex(8);
    const now = this.clock.now();
    const freeBefore = new Date(now - opco.rateLimit.windowMs);
    if (priority > PRIORITY.client) {
      const reserve = Math.floor(opco.rateLimit.limit * CLIENT_RESERVE);
      if (reserve > 0 && (await this.slots.count({ opcoId: opco.id, usedAt: { $lte: freeBefore } })) <= reserve) return null;
    }
    const slot = await this.slots.findOneAndUpdate(
      { opcoId: opco.id, usedAt: { $lte: freeBefore } },
      { $set: { usedAt: new Date(now), holder } },
    );
    if (!slot) return null;
    return {
      release: async () => {
        await this.slots.findOneAndUpdate({ _id: slot._id, holder }, { $set: { usedAt: this.clock.date() } });
      },
    };
  }

  /** How long until some slot leaves the window; 0 when one is free now. */
  async msUntilFree(opco: BudgetKey): Promise<number> {
    const [oldest] = await this.slots.find({ opcoId: opco.id }, { sort: { usedAt: 1 }, limit: 1 });
    if (!oldest) return 0;
    return Math.max(0, oldest.usedAt.getTime() + opco.rateLimit.windowMs - this.clock.now());
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
