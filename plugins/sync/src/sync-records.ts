/**
 * Syncs (SPEC 2.6, 3.2, D19, D20) and their batches in the Store. A sync's discovered numbers
 * are kept as batch documents, each `pending` until fetched, so a restarted worker goes on from
 * the first batch not completed. The tenant's API key is sealed on the record (SPEC 5.4).
 */
import { DuplicateKeyError, createError, seal, sha256Hex, unseal, type Collection, type Sealed, type Store } from '@opco-proxy/core';

export type SyncStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

export interface SyncRecord {
  _id: string;
  tenant: string;
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
  leaseOwner: string | null;
  leaseUntil: Date | null;
}

export interface BatchRecord {
  _id: string;
  syncId: string;
  batch: number;
  numeros: string[];
  status: 'pending' | 'completed';
  attempts: number;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  nextAttemptAt: Date | null;
}

interface RunningLock {
  _id: string;
  syncId: string;
}

export const FINISHED: SyncStatus[] = ['completed', 'failed', 'cancelled'];

export class SyncRecords {
  readonly syncs: Collection<SyncRecord>;
  readonly batches: Collection<BatchRecord>;
  private readonly locks: Collection<RunningLock>;

  constructor(store: Store, private readonly masterKey: Buffer) {
    this.syncs = store.collection<SyncRecord>('syncs');
    this.batches = store.collection<BatchRecord>('sync_batches');
    this.locks = store.collection<RunningLock>('sync_locks');
  }

  async prepare(): Promise<void> {
    await this.syncs.createIndex({ tenant: 1, opcoId: 1 });
    await this.syncs.createIndex({ status: 1 });
    await this.batches.createIndex({ syncId: 1, status: 1 });
  }

  /**
   * D19: one sync pending or processing per tenant and opcoId. The lock is a document under a
   * unique `_id`, so two instances racing cannot both start one; a lock left by a finished
   * sync (a crash between the two writes) is cleared and taken.
   */
  async lock(tenant: string, opcoId: string, syncId: string): Promise<void> {
    const _id = sha256Hex(`${tenant}\n${opcoId}`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.locks.insertOne({ _id, syncId });
        return;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const held = await this.locks.findOne({ _id });
      const holder = held && (await this.syncs.findOne({ _id: held.syncId }));
      if (holder && !FINISHED.includes(holder.status)) {
        throw createError('CONFLICT', `a sync of ${opcoId} is already ${holder.status} for this API key`, { extra: { syncId: holder._id } });
      }
      if (held) await this.locks.deleteOne({ _id, syncId: held.syncId });
    }
    throw createError('UNAVAILABLE', 'the sync could not be started; retry');
  }

  async unlock(sync: Pick<SyncRecord, '_id' | 'tenant' | 'opcoId'>): Promise<void> {
    await this.locks.deleteOne({ _id: sha256Hex(`${sync.tenant}\n${sync.opcoId}`), syncId: sync._id });
  }

  sealKey(syncId: string, apiKey: string): Sealed {
    return seal(this.masterKey, apiKey, syncId);
  }

  apiKeyOf(sync: SyncRecord): string {
    return unseal(this.masterKey, sync.apiKey, sync._id).toString('utf8');
  }

  findForTenant(syncId: string, tenant: string): Promise<SyncRecord | null> {
    return this.syncs.findOne({ _id: syncId, tenant });
  }

  /** Moves a sync that is still running; null when it already finished (cancelled, failed). */
  updateRunning(syncId: string, set: Partial<SyncRecord>, inc?: Record<string, number>): Promise<SyncRecord | null> {
    const update: { $set?: Partial<SyncRecord>; $inc?: Record<string, number> } = {};
    if (Object.keys(set).length > 0) update.$set = set;
    if (inc) update.$inc = inc;
    return this.syncs.findOneAndUpdate({ _id: syncId, status: { $in: ['pending', 'processing'] } }, update);
  }

  /** Progress only moves forward, whichever of two concurrent batches writes last. */
  advance(syncId: string, progress: number, estimatedEnd: string): Promise<SyncRecord | null> {
    return this.syncs.findOneAndUpdate({ _id: syncId, status: 'processing', progress: { $lt: progress } }, { $set: { progress, estimatedEnd } });
  }
}

/** SPEC 2.6 as the client sees it. */
export function toResource(sync: SyncRecord): Record<string, unknown> {
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
