/**
 * The one way durable work is leased, retried and swept (jobs, webhook deliveries, sync batches,
 * pollers), in the manner of BullMQ's LockManager. A record is due from `nextAttemptAt`; a worker
 * claims it with a fresh lease token, writes under that token only (a worker that lost its lease
 * can never overwrite its successor's work), renews the lease while it works, and releases it,
 * scheduling the next attempt in the same write. A due record nobody holds for longer than a
 * grace period has lost its queue message: `overdue` finds it for the sweep to queue it again.
 * A queue message whose record cannot be claimed is answered by `unclaimed`, the same way for
 * every kind of work.
 *
 * The lease fields (`leaseOwner`, `leaseUntil`) are written here only: a new record takes them
 * from `unleased`, and work ended or restarted by someone other than the holder is `revoke`d.
 */
import { randomHex } from '../crypto/crypto.js';
import type { Clock } from '../clock.js';
import type { Collection, Doc, Filter, Update } from '../ports/store.js';

export interface Leased extends Doc {
  leaseOwner: string | null;
  leaseUntil: Date | null;
  /** Due from then; a claim before it finds nothing (an early or duplicate message). */
  nextAttemptAt: Date;
}

/** The lease fields of a record nobody holds (due from `dueAt`): what a new record is inserted with. */
export function unleased(): Pick<Leased, 'leaseOwner' | 'leaseUntil'>;
export function unleased(dueAt: Date): Omit<Leased, '_id'>;
export function unleased(dueAt?: Date): Partial<Leased> {
  return dueAt ? { leaseOwner: null, leaseUntil: null, nextAttemptAt: dueAt } : { leaseOwner: null, leaseUntil: null };
}

export class LeaseLost extends Error {
  constructor(id: string) {
    super(`the lease on ${id} was lost; another worker has it`);
    this.name = 'LeaseLost';
  }
}

/** A redelivered message's record is held by a live lease: thrown so that the queue hands the message back. */
export class LeaseHeld extends Error {
  constructor(id: string) {
    super(`${id} is leased by another worker; its message comes back until the lease lapses`);
    this.name = 'LeaseHeld';
  }
}

/** How a kind of work answers a message for a record it could not claim (LeasedRecords.unclaimed). */
export interface UnclaimedMessage<T> {
  /** The record's work is over: the message is acknowledged. */
  finished(record: T): boolean;
  /** What a finished record may still owe (a job's event), done before the acknowledgement. */
  ended?(record: T): Promise<void>;
  /** Publishes the record's message again, to arrive in `delayMs`. */
  requeue(delayMs: number): Promise<void>;
}

export interface Claimed<T> {
  record: T;
  /** The lease token of this claim: every later write of this run carries it. */
  token: string;
  /**
   * The record was still marked with another lease, lapsed or given up with `lapse`: its holder
   * stopped in the middle of its work, which may have gone out (D18: check before doing it again).
   */
  takenOver: boolean;
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
    // The record as it was, to tell a takeover; the claimed one is that plus this update.
    const before = await this.collection.findOneAndUpdate(
      { $and: [filter, this.unheld(now), { nextAttemptAt: { $lte: now } }] },
      update,
      { returnDocument: 'before', ...(options.sort && { sort: options.sort }) },
    );
    if (!before) return null;
    const record: Record<string, unknown> = { ...before, ...update.$set };
    for (const [field, by] of Object.entries(options.inc ?? {}))
      record[field] = (((before as Record<string, unknown>)[field] as number | undefined) ?? 0) + by;
    return { record: record as T, token, takenOver: before.leaseOwner !== null && before.leaseOwner !== undefined };
  }

  /** Writes under the lease (and renews it by `renewMs` when given); LeaseLost if it was taken over. */
  async update(
    id: string,
    token: string,
    set: Partial<T>,
    options: { inc?: Record<string, number>; renewMs?: number; unset?: string[] } = {},
  ): Promise<T> {
    const fields: Record<string, unknown> = { ...set };
    if (options.renewMs !== undefined) fields.leaseUntil = new Date(this.clock.now() + options.renewMs);
    const update: Update = withUnset({ $set: fields }, options.unset);
    if (options.inc) update.$inc = options.inc;
    const updated = await this.collection.findOneAndUpdate({ _id: id, leaseOwner: token }, update);
    if (!updated) throw new LeaseLost(id);
    return updated;
  }

  /**
   * Gives the record up with the changes of this run, in one write: `nextAttemptAt` (a retry's
   * date) must be written with the release, or a message arriving in between finds it held.
   * Null when the lease was lost (nothing written).
   */
  release(id: string, token: string, set: Partial<T> = {}, options: { unset?: string[] } = {}): Promise<T | null> {
    return this.collection.findOneAndUpdate(
      { _id: id, leaseOwner: token },
      withUnset({ $set: { ...set, leaseOwner: null, leaseUntil: null } }, options.unset),
    );
  }

  /**
   * Writes `set` to the record matching `filter` whoever holds it, and takes its lease away: the
   * work was ended or restarted from outside the run (cancelled, failed, resent). A holder's later
   * writes under its token find nothing (`update` throws LeaseLost, `release` returns null). Null
   * when nothing matches.
   */
  revoke(filter: Filter, set: Partial<T>, options: { unset?: string[] } = {}): Promise<T | null> {
    return this.collection.findOneAndUpdate(
      filter,
      withUnset({ $set: { ...set, leaseOwner: null, leaseUntil: null } }, options.unset),
    );
  }

  /**
   * Gives the record up as if this worker had died: the lease lapses now but keeps its token, so
   * the next claim is `takenOver` and treats what this run did as uncertain.
   */
  async lapse(id: string, token: string): Promise<void> {
    await this.collection.findOneAndUpdate({ _id: id, leaseOwner: token }, { $set: { leaseUntil: this.clock.date() } });
  }

  /**
   * Answers a queue message for record `id` that `claim` did not take; resolving acknowledges it.
   * Gone: acknowledged. Finished: `how.ended`, then acknowledged. Held by a live lease: a first
   * delivery is a duplicate, acknowledged (the holder's run schedules what follows); a redelivered
   * one throws LeaseHeld, so the queue hands it back until the lease lapses (its holder may have
   * died: D18). Unheld: an early message (a duplicate of a retry not yet due) or one that raced a
   * release, queued again for when the record is due.
   */
  async unclaimed(id: string, redelivered: boolean, how: UnclaimedMessage<T>): Promise<void> {
    const record = await this.collection.findOne({ _id: id });
    if (!record) return;
    if (how.finished(record)) return how.ended?.(record);
    const now = this.clock.now();
    if (record.leaseUntil && record.leaseUntil.getTime() > now) {
      if (redelivered) throw new LeaseHeld(id);
      return;
    }
    await how.requeue(Math.max(0, record.nextAttemptAt.getTime() - now));
  }

  /** Runs `work` while renewing the lease every third of `leaseMs`; renewal stops at the end. */
  async hold<R>(id: string, token: string, leaseMs: number, work: () => Promise<R>): Promise<R> {
    let stopped = false;
    let timer: { cancel(): void } | undefined;
    const renew = () => {
      timer = this.clock.setTimeout(
        () => {
          if (stopped) return;
          this.update(id, token, {}, { renewMs: leaseMs }).then(
            () => renew(),
            () => undefined, // lost or unreachable: the work's own writes will tell
          );
        },
        Math.max(50, Math.floor(leaseMs / 3)),
      );
    };
    renew();
    try {
      return await work();
    } finally {
      stopped = true;
      timer?.cancel();
    }
  }

  /** Unfinished records (`filter`), unheld, due at `dueBefore` or earlier, most overdue first: their message may be lost. */
  overdue(filter: Filter, dueBefore: Date, limit = 500): Promise<T[]> {
    const due = { nextAttemptAt: { $lte: dueBefore } };
    return this.collection.find(
      { $and: [filter, this.unheld(this.clock.date()), due] },
      { sort: { nextAttemptAt: 1 }, limit },
    );
  }

  /** Since when the most overdue record (due, unheld) has been due; null when none waits. */
  async dueSince(filter: Filter): Promise<Date | null> {
    const [late] = await this.overdue(filter, this.clock.date(), 1);
    return late ? late.nextAttemptAt : null;
  }
}

function withUnset(update: Update, fields: string[] | undefined): Update {
  if (fields?.length) update.$unset = Object.fromEntries(fields.map((field) => [field, '']));
  return update;
}
