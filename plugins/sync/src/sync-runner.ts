/**
 * The sync process (SPEC 3.2, 4.14, D19, D20): discovery reads every page of dossiers/etats
 * (one year at a time from `minYear`), keeps the numbers as batches of the profile's size, then
 * each batch is fetched through dossiers/liste as its own queue message at low priority.
 * Progress: discovery 0 to 0.5, fetch 0.5 to 1.
 */
import {
  PRIORITY,
  asServiceError,
  isRetriedByWorkers,
  type Clock,
  type Logger,
  type PluginApi,
  type Queue,
  type ServiceError,
  type Tenant,
} from '@opco-proxy/core';
import { unleased, type Claimed, type RetryPolicy } from '@opco-proxy/core/durable';
import { etatsPages, liste, type ReadDeps } from './upstream-reads.js';
import { contentHash, type Snapshots } from './snapshots.js';
import { FINISHED, type BatchRecord, type SyncRecord, type SyncRecords } from './sync-records.js';

export const SYNC_QUEUE = 'sync';
/** A sync's queue message; `tenant` lets a worker share its slots between tenants before loading the sync (TenantSlots). */
export type SyncMessage = (
  { kind: 'sync-discovery'; syncId: string } | { kind: 'sync-batch'; syncId: string; batch: number }
) & { tenant?: string; turns?: number };

export interface RunnerDeps extends ReadDeps {
  records: SyncRecords;
  snapshots: Snapshots;
  queue: Queue;
  emit: PluginApi['emit'];
  log: Logger;
  clock: Clock;
  syncsEnded: { inc(labels: { status: string }): void };
  /** 3 attempts per batch, with the jobs' backoff (SPEC 8). */
  retries: RetryPolicy;
  leaseMs: number;
  onCompleted(sync: SyncRecord): Promise<void>;
}

export class SyncRunner {
  constructor(private readonly deps: RunnerDeps) {}

  publish(message: SyncMessage, delayMs = 0): Promise<void> {
    return this.deps.queue.publish(SYNC_QUEUE, message, { priority: PRIORITY.low, delayMs });
  }

  async handle(message: SyncMessage): Promise<void> {
    if (message.kind === 'sync-discovery') await this.discover(message.syncId);
    else await this.fetchBatch(message.syncId, message.batch);
  }

  private tenantOf(sync: SyncRecord): Tenant {
    return { hash: sync.tenant, apiKey: this.deps.records.apiKeyOf(sync) };
  }

  private isStopped(syncId: string) {
    return async () => {
      const sync = await this.deps.records.get(syncId);
      return !sync || FINISHED.includes(sync.status);
    };
  }

  private async discover(syncId: string): Promise<void> {
    const { records, leaseMs } = this.deps;
    const claimed = await records.claimDiscovery(syncId, leaseMs);
    if (!claimed) return;
    try {
      const numeros = await records.syncLeases.hold(syncId, claimed.token, leaseMs, () =>
        this.readNumbers(claimed.record),
      );
      if (numeros === null) return; // cancelled meanwhile
      await this.planBatches(claimed, numeros);
    } catch (err) {
      await this.fail(claimed.record, `discovery failed: ${asServiceError(err).message}`);
    }
  }

  /** Reads every page (per year from minYear); null when the sync stopped meanwhile. */
  private async readNumbers(sync: SyncRecord): Promise<string[] | null> {
    const tenant = this.tenantOf(sync);
    const stopped = this.isStopped(sync._id);
    const currentYear = this.deps.clock.date().getUTCFullYear();
    const years = sync.minYear
      ? Array.from({ length: Math.max(0, currentYear - sync.minYear + 1) }, (_, i) => String(sync.minYear! + i))
      : [undefined];
    const numeros = new Set<string>();
    let knownTotal = 0;
    for (const year of years) {
      let yearTotal = 0;
      for await (const page of etatsPages(
        this.deps,
        sync.opcoId,
        tenant,
        year ? { anneeDossier: year } : {},
        stopped,
      )) {
        if (yearTotal === 0) knownTotal += yearTotal = page.total;
        for (const item of page.items) if (item.numeroInterne) numeros.add(String(item.numeroInterne));
        const progress = 0.5 * Math.min(1, numeros.size / Math.max(knownTotal, numeros.size, 1));
        const live = await this.deps.records.updateRunning(sync._id, { discovered: numeros.size, progress });
        if (!live) return null;
      }
    }
    return [...numeros];
  }

  private async planBatches({ record: sync, token }: Claimed<SyncRecord>, numeros: string[]): Promise<void> {
    const { records, clock } = this.deps;
    const size = this.deps.opcos.get(sync.opcoId).profile.sync.batchSize;
    const totalBatches = Math.ceil(numeros.length / size);
    for (let i = 0; i < totalBatches; i++) {
      await records.planBatch({
        _id: `${sync._id}:${i + 1}`,
        syncId: sync._id,
        batch: i + 1,
        numeros: numeros.slice(i * size, (i + 1) * size),
        status: 'pending',
        attempts: 0,
        ...unleased(clock.date()),
      });
    }
    const planned = await records.syncLeases.release(sync._id, token, {
      phase: 'fetch',
      total: numeros.length,
      discovered: numeros.length,
      totalBatches,
      progress: 0.5,
      fetchStartedAt: clock.date(),
    });
    if (!planned || FINISHED.includes(planned.status)) return;
    await this.deps.emit({
      id: `${sync._id}:started`,
      type: 'sync.started',
      tenant: sync.tenant,
      opcoId: sync.opcoId,
      data: { syncId: sync._id, total: numeros.length },
    });
    if (totalBatches === 0) return this.complete(planned);
    for (let batch = 1; batch <= totalBatches; batch++)
      await this.publish({ kind: 'sync-batch', syncId: sync._id, batch, tenant: sync.tenant });
  }

  private async fetchBatch(syncId: string, batchNo: number): Promise<void> {
    const { records, leaseMs } = this.deps;
    const sync = await records.get(syncId);
    if (!sync || sync.status !== 'processing') return;
    const claimed = await records.claimBatch(syncId, batchNo, leaseMs);
    if (!claimed) return; // completed already, early, or another worker has it
    const { record: batch, token } = claimed;
    let dossiers: Array<Record<string, unknown>>;
    try {
      dossiers = await records.batchLeases.hold(batch._id, token, leaseMs, () =>
        liste(this.deps, sync.opcoId, this.tenantOf(sync), batch.numeros, this.isStopped(syncId)),
      );
    } catch (err) {
      return this.batchFailed(sync, claimed, asServiceError(err));
    }
    for (const dossier of dossiers) {
      await this.deps.snapshots.put(sync.tenant, sync.opcoId, 'dossier', String(dossier.numeroInterne), {
        etat: (dossier.etat as string | undefined) ?? null,
        hash: contentHash(dossier),
      });
    }
    if (!(await records.batchLeases.release(batch._id, token, { status: 'completed' }))) return;
    const counted = await records.updateRunning(syncId, {}, { fetched: dossiers.length, batchesCompleted: 1 });
    if (!counted) return;
    const { progress, estimatedEnd } = this.progressOf(counted);
    await records.advance(syncId, progress, estimatedEnd);
    await this.deps.emit({
      id: `${syncId}:batch:${batchNo}`,
      type: 'sync.batch',
      tenant: sync.tenant,
      opcoId: sync.opcoId,
      data: { syncId, batch: batchNo, totalBatches: counted.totalBatches, dossiers },
    });
    if (counted.batchesCompleted >= counted.totalBatches) await this.complete(counted);
  }

  private async batchFailed(
    sync: SyncRecord,
    { record: batch, token }: Claimed<BatchRecord>,
    error: ServiceError,
  ): Promise<void> {
    const { records, clock } = this.deps;
    if (error.code === 'UNAVAILABLE' && (await this.isStopped(sync._id)())) return; // cancelled while waiting
    const delayMs = isRetriedByWorkers(error) ? this.deps.retries.nextDelay(batch.attempts) : null;
    if (delayMs !== null) {
      await records.batchLeases.release(batch._id, token, { nextAttemptAt: new Date(clock.now() + delayMs) });
      await this.publish({ kind: 'sync-batch', syncId: sync._id, batch: batch.batch, tenant: sync.tenant }, delayMs);
      return;
    }
    await this.fail(sync, `batch ${batch.batch} failed after ${batch.attempts} attempt(s): ${error.message}`);
  }

  private async complete(sync: SyncRecord): Promise<void> {
    const completedAt = this.deps.clock.date();
    const done = await this.deps.records.complete(sync._id, completedAt);
    if (!done) return;
    this.deps.syncsEnded.inc({ status: 'completed' });
    await this.deps.records.unlock(done);
    await this.deps.emit({
      id: `${sync._id}:completed`,
      type: 'sync.completed',
      tenant: sync.tenant,
      opcoId: sync.opcoId,
      data: { syncId: sync._id, total: done.total, durationMs: completedAt.getTime() - done.startedAt.getTime() },
    });
    await this.deps.onCompleted(done);
  }

  /** The route has marked it cancelled: say so to the tenant's webhooks (D22). */
  async cancelled(sync: SyncRecord): Promise<void> {
    await this.deps.emit({
      id: `${sync._id}:cancelled`,
      type: 'sync.cancelled',
      tenant: sync.tenant,
      opcoId: sync.opcoId,
      data: { syncId: sync._id },
    });
  }

  async fail(sync: SyncRecord, message: string): Promise<void> {
    const failed = await this.deps.records.fail(sync._id, message, this.deps.clock.date());
    if (!failed) return;
    this.deps.syncsEnded.inc({ status: 'failed' });
    this.deps.log.warn({ syncId: sync._id, error: message }, 'sync failed');
    await this.deps.records.unlock(failed);
    await this.deps.emit({
      id: `${sync._id}:failed`,
      type: 'sync.failed',
      tenant: sync.tenant,
      opcoId: sync.opcoId,
      data: { syncId: sync._id, error: message },
    });
  }

  /** Fetch covers 0.5 to 1; the end is estimated from the pace of the batches so far. */
  private progressOf(sync: SyncRecord): { progress: number; estimatedEnd: string } {
    const now = this.deps.clock.now();
    const share = sync.totalBatches === 0 ? 1 : sync.batchesCompleted / sync.totalBatches;
    const elapsed = now - (sync.fetchStartedAt ?? sync.startedAt).getTime();
    const remaining =
      sync.batchesCompleted === 0 ? 0 : (elapsed / sync.batchesCompleted) * (sync.totalBatches - sync.batchesCompleted);
    return { progress: 0.5 + 0.5 * share, estimatedEnd: new Date(now + remaining).toISOString() };
  }
}
