/**
 * Syncs (SPEC 2.6, 3.2, D19, D20) and their batches in the Store. A sync's discovered numbers
 * are kept as batch documents, each `pending` until fetched, so a restarted worker goes on from
 * the first batch not completed. Discovery and batches are leased with the durable-work kit. The
 * tenant's API key is sealed on the record (SPEC 5.4).
 */
import {
  DuplicateKeyError,
  createError,
  sha256Hex,
  type Clock,
  type Collection,
  type HeldRecords,
  type Sealed,
  type Sealer,
  type Store,
} from '@opco-proxy/core';
import { LeasedRecords, type Claimed, type Leased } from '@opco-proxy/core/durable';
import { newestFirst, type Page, type PageRequest } from '@opco-proxy/core/durable';
import type { Sync, SyncStatus } from '@opco-proxy/schemas';

export type { SyncStatus };

export interface SyncRecord extends Leased {
  tenant: string;
  /** The client address of a tenant the upstream had not accepted yet at its start (core's HeldWork, P13). */
  heldFrom?: string;
  opcoId: string;
  status: SyncStatus;
  minYear: number | null;
  enablePoller: boolean;
  apiKey: Sealed;
  phase: 'discovery' | 'fetch';
  total: number;
  discovered: number;
  fetched: number;
  progress: number;
  batchesCompleted: number;
  totalBatches: number;
  estimatedEnd: string | null;
  error: string | null;
  startedAt: Date;
  fetchStartedAt: Date | null;
  completedAt: Date | null;
}

export interface BatchRecord extends Leased {
  syncId: string;
  batch: number;
  numeros: string[];
  status: 'pending' | 'completed';
  attempts: number;
}

interface RunningLock {
  _id: string;
  syncId: string;
  /** When it was taken: the start route inserts the sync right after, so a lock without one is stale only after STARTING_GRACE_MS. */
  lockedAt?: Date;
}

/** Far longer than a start takes between its lock and its sync record; a crash in that gap blocks the tenant this long. */
const STARTING_GRACE_MS = 60_000;

export const FINISHED: SyncStatus[] = ['completed', 'failed', 'cancelled'];
const RUNNING = { status: { $in: ['pending', 'processing'] } };

export class SyncRecords {
  private readonly syncs: Collection<SyncRecord>;
  private readonly batches: Collection<BatchRecord>;
  private readonly locks: Collection<RunningLock>;
  readonly syncLeases: LeasedRecords<SyncRecord>;
  readonly batchLeases: LeasedRecords<BatchRecord>;

  constructor(
    store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    owner: string,
  ) {
    this.syncs = store.collection<SyncRecord>('syncs');
    this.batches = store.collection<BatchRecord>('sync_batches');
    this.locks = store.collection<RunningLock>('sync_locks');
    this.syncLeases = new LeasedRecords(this.syncs, clock, owner);
    this.batchLeases = new LeasedRecords(this.batches, clock, owner);
  }

  async prepare(): Promise<void> {
    await this.syncs.createIndex({ tenant: 1, opcoId: 1 });
    await this.syncs.createIndex({ status: 1, nextAttemptAt: 1 });
    await this.batches.createIndex({ syncId: 1, status: 1 });
    await this.syncs.createIndex({ status: 1, startedAt: -1 });
    await this.syncs.createIndex({ heldFrom: 1, status: 1 });
  }

  /** The syncs unproven tenants started, per client address (P13), for core's HeldWork. */
  held(): HeldRecords {
    const holding = (address: string) => ({ heldFrom: address, ...RUNNING });
    return {
      kind: 'syncs',
      countFrom: (address) => this.syncs.count(holding(address)),
      tenantsFrom: async (address, limit) => [
        ...new Set((await this.syncs.find(holding(address), { limit })).map((sync) => sync.tenant)),
      ],
      unmark: (tenant) => this.syncs.updateMany({ tenant, heldFrom: { $exists: true } }, { $unset: { heldFrom: '' } }),
    };
  }

  /**
   * D19: one sync pending or processing per tenant and opcoId. The lock is a document under a
   * unique `_id`, so two instances racing cannot both start one; a lock left by a finished
   * sync is cleared and taken, and so is one whose sync was never stored (a crash between the two
   * writes) once it is older than a start can take.
   */
  async lock(tenant: string, opcoId: string, syncId: string): Promise<void> {
    const _id = sha256Hex(`${tenant}\n${opcoId}`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.locks.insertOne({ _id, syncId, lockedAt: this.clock.date() });
        return;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const held = await this.locks.findOne({ _id });
      const holder = held && (await this.syncs.findOne({ _id: held.syncId }));
      if (holder && !FINISHED.includes(holder.status)) {
        throw createError('CONFLICT', `a sync of ${opcoId} is already ${holder.status} for this API key`, {
          extra: { syncId: holder._id },
        });
      }
      // Old locks have no date: they predate this rule and their start is long over.
      const starting =
        held && !holder && held.lockedAt && this.clock.now() - held.lockedAt.getTime() < STARTING_GRACE_MS;
      if (starting)
        throw createError('CONFLICT', `a sync of ${opcoId} is being started for this API key`, {
          extra: { syncId: held.syncId },
        });
      if (held) await this.locks.deleteOne({ _id, syncId: held.syncId });
    }
    throw createError('UNAVAILABLE', 'the sync could not be started; retry');
  }

  async unlock(sync: Pick<SyncRecord, '_id' | 'tenant' | 'opcoId'>): Promise<void> {
    await this.locks.deleteOne({ _id: sha256Hex(`${sync.tenant}\n${sync.opcoId}`), syncId: sync._id });
  }

  sealKey(syncId: string, apiKey: string): Sealed {
    return this.sealer.seal(apiKey, syncId);
  }

  apiKeyOf(sync: SyncRecord): string {
    return this.sealer.unseal(sync.apiKey, sync._id).toString('utf8');
  }

  insert(sync: SyncRecord): Promise<void> {
    return this.syncs.insertOne(sync);
  }

  async discard(syncId: string): Promise<void> {
    await this.syncs.deleteOne({ _id: syncId });
  }

  get(syncId: string): Promise<SyncRecord | null> {
    return this.syncs.findOne({ _id: syncId });
  }

  findForTenant(syncId: string, tenant: string): Promise<SyncRecord | null> {
    return this.syncs.findOne({ _id: syncId, tenant });
  }

  /** Every tenant's syncs, newest first, for operators (P9): `running` is pending or processing. */
  pageAll(status: 'running' | 'completed' | 'failed' | 'cancelled', page: PageRequest): Promise<Page<SyncRecord>> {
    return newestFirst(this.syncs, status === 'running' ? RUNNING : { status }, 'startedAt', page);
  }

  /** SPEC 3.2: pending or processing becomes cancelled; null when it was not running. */
  cancel(syncId: string, tenant: string): Promise<SyncRecord | null> {
    return this.syncLeases.revoke(
      { _id: syncId, tenant, ...RUNNING },
      { status: 'cancelled', completedAt: this.clock.date() },
    );
  }

  /** The discovery of a sync, under a lease: the sync becomes processing. */
  claimDiscovery(syncId: string, leaseMs: number): Promise<Claimed<SyncRecord> | null> {
    return this.syncLeases.claim({ _id: syncId, ...RUNNING, phase: 'discovery' }, leaseMs, {
      set: { status: 'processing' },
    });
  }

  /** Moves a sync that is still running; null when it already finished (cancelled, failed). */
  updateRunning(syncId: string, set: Partial<SyncRecord>, inc?: Record<string, number>): Promise<SyncRecord | null> {
    const update: { $set?: Partial<SyncRecord>; $inc?: Record<string, number> } = {};
    if (Object.keys(set).length > 0) update.$set = set;
    if (inc) update.$inc = inc;
    return this.syncs.findOneAndUpdate({ _id: syncId, ...RUNNING }, update);
  }

  /** Progress only moves forward, whichever of two concurrent batches writes last. */
  advance(syncId: string, progress: number, estimatedEnd: string): Promise<SyncRecord | null> {
    return this.syncs.findOneAndUpdate(
      { _id: syncId, status: 'processing', progress: { $lt: progress } },
      { $set: { progress, estimatedEnd } },
    );
  }

  complete(syncId: string, completedAt: Date): Promise<SyncRecord | null> {
    return this.syncLeases.revoke(
      { _id: syncId, status: 'processing' },
      { status: 'completed', progress: 1, completedAt, estimatedEnd: completedAt.toISOString() },
    );
  }

  /** A running sync fails, whoever holds its discovery; null when it already finished. */
  fail(syncId: string, error: string, completedAt: Date): Promise<SyncRecord | null> {
    return this.syncLeases.revoke({ _id: syncId, ...RUNNING }, { status: 'failed', error, completedAt });
  }

  /** Plans a batch; a re-run discovery finds it planned already. */
  async planBatch(batch: BatchRecord): Promise<void> {
    await this.batches.insertOne(batch).catch((err) => {
      if (!(err instanceof DuplicateKeyError)) throw err;
    });
  }

  /** A pending batch, due and unheld, under a lease; its attempt counted. */
  claimBatch(syncId: string, batch: number, leaseMs: number): Promise<Claimed<BatchRecord> | null> {
    return this.batchLeases.claim({ _id: `${syncId}:${batch}`, status: 'pending' }, leaseMs, { inc: { attempts: 1 } });
  }

  /** Discoveries whose message may be lost: running syncs in discovery, unheld, due at `dueBefore` or earlier. */
  overdueDiscoveries(dueBefore: Date): Promise<SyncRecord[]> {
    return this.syncLeases.overdue({ ...RUNNING, phase: 'discovery' }, dueBefore);
  }

  /** Batches whose message may be lost: pending, unheld, due at `dueBefore` or earlier, of processing syncs. */
  async overdueBatches(dueBefore: Date): Promise<BatchRecord[]> {
    const running = await this.syncs.find({ status: 'processing', phase: 'fetch' });
    if (running.length === 0) return [];
    return this.batchLeases.overdue({ status: 'pending', syncId: { $in: running.map((s) => s._id) } }, dueBefore);
  }
}

/** SPEC 2.6 as the client sees it. */
export function toResource(sync: SyncRecord): Sync {
  return {
    syncId: sync._id,
    opcoId: sync.opcoId,
    status: sync.status,
    total: sync.total,
    discovered: sync.discovered,
    fetched: sync.fetched,
    progress: Math.round(sync.progress * 1000) / 1000,
    batchesCompleted: sync.batchesCompleted,
    totalBatches: sync.totalBatches,
    estimatedEnd: sync.estimatedEnd,
    error: sync.error,
    startedAt: sync.startedAt.toISOString(),
    completedAt: sync.completedAt?.toISOString() ?? null,
  };
}
