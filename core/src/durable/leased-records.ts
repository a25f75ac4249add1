/**
 * The one way durable work is leased, retried and swept (jobs, webhook deliveries, sync batches,
 * pollers), in the manner of BullMQ's LockManager. A record is due from `nextAttemptAt`; a worker
 * claims it with a fresh lease token, writes under that token only (a worker that lost its lease
 * can never overwrite its successor's work), renews the lease while it works, and releases it,
 * scheduling the next attempt in the same write. A due record nobody holds for longer than a
 * grace period has lost its queue message: `overdue` finds it for the sweep to queue it again.
 */
import { randomHex } from '../crypto.js';
import type { Clock } from '../clock.js';
import type { Collection, Doc, Filter } from '../ports/store.js';

export interface Leased extends Doc {
  leaseOwner: string | null;
  leaseUntil: Date | null;
  /** Due from then; a claim before it finds nothing (an early or duplicate message). */
  nextAttemptAt: Date;
}

export class LeaseLost extends Error {
  constructor(id: string) {
    super(`the lease on ${id} was lost; another worker has it`);
    this.name = 'LeaseLost';
  }
}

export interface Claimed<T> {
  record: T;
  /** The lease token of this claim: every later write of this run carries it. */
  token: string;
}

export interface ClaimOptions<T> {
  set?: Partial<T>;
  inc?: Record<string, number>;
  /** When several records match, the first in this order is claimed. */
  sort?: Record<string, 1 | -1>;
}

export class LeasedRecords<T extends Leased> {
  constructor(
    private readonly collection: Collection<T>,
    private readonly clock: Clock,
    /** Prefix of lease tokens, naming the worker in the records (operators, logs). */
    private readonly owner: string,
  ) {}

  /** Held by nobody (or by a lapsed lease). */
  private unheld(now: Date): Filter {
    return { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] };
  }

  /** Takes the lease of a record matching `filter` that is due and unheld. */
  async claim(filter: Filter, leaseMs: number, options: ClaimOptions<T> = {}): Promise<Claimed<T> | null> {
    const now = this.clock.date();
    const token = `${this.owner}:${randomHex(6)}`;
    const update: { $set: Record<string, unknown>; $inc?: Record<string, number> } = {
      $set: { ...options.set, leaseOwner: token, leaseUntil: new Date(now.getTime() + leaseMs) },
    };
    if (options.inc) update.$inc = options.inc;
    const record = await this.collection.findOneAndUpdate(
      { $and: [filter, this.unheld(now), { nextAttemptAt: { $lte: now } }] },
      update,
      options.sort ? { sort: options.sort } : {},
    );
    return record ? { record, token } : null;
  }

  /** Writes under the lease (and renews it by `renewMs` when given); LeaseLost if it was taken over. */
  async update(id: string, token: string, set: Partial<T>, options: { inc?: Record<string, number>; renewMs?: number } = {}): Promise<T> {
    const fields: Record<string, unknown> = { ...set };
    if (options.renewMs !== undefined) fields.leaseUntil = new Date(this.clock.now() + options.renewMs);
    const update: { $set: Record<string, unknown>; $inc?: Record<string, number> } = { $set: fields };
    if (options.inc) update.$inc = options.inc;
    const updated = await this.collection.findOneAndUpdate({ _id: id, leaseOwner: token }, update);
    if (!updated) throw new LeaseLost(id);
    return updated;
  }

  /**
   * Gives the record up with the changes of this run, in one write: `nextAttemptAt` (a retry's
   * date) must be written with the release, or a message arriving in between finds it held.
   */
  release(id: string, token: string, set: Partial<T> = {}): Promise<T | null> {
    return this.collection.findOneAndUpdate({ _id: id, leaseOwner: token }, { $set: { ...set, leaseOwner: null, leaseUntil: null } });
  }

  /** Runs `work` while renewing the lease every third of `leaseMs`; renewal stops at the end. */
  async hold<R>(id: string, token: string, leaseMs: number, work: () => Promise<R>): Promise<R> {
    let stopped = false;
    let timer: { cancel(): void } | undefined;
    const renew = () => {
      timer = this.clock.setTimeout(() => {
        if (stopped) return;
        this.update(id, token, {}, { renewMs: leaseMs }).then(
          () => renew(),
          () => undefined, // lost or unreachable: the work's own writes will tell
        );
      }, Math.max(50, Math.floor(leaseMs / 3)));
    };
    renew();
    try {
      return await work();
    } finally {
      stopped = true;
      timer?.cancel();
    }
  }

  /** Unfinished records (`filter`), unheld, due for `graceMs` or more: their message may be lost. */
  overdue(filter: Filter, graceMs: number, limit = 500): Promise<T[]> {
    const now = this.clock.now();
    return this.collection.find(
      { $and: [filter, this.unheld(new Date(now)), { nextAttemptAt: { $lte: new Date(now - graceMs) } }] },
      { sort: { nextAttemptAt: 1 }, limit },
    );
  }
}
