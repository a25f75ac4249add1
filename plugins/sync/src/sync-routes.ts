/** The sync operations of SPEC 4.14 and the poller operations of D21; each tenant sees only its own. */
import { randomUUID } from 'node:crypto';
import {
  asServiceError,
  createError,
  isServiceError,
  type Clock,
  type OpcoDirectory,
  type PluginApi,
} from '@opco-proxy/core';
import { unleased } from '@opco-proxy/core/durable';
import { FINISHED, toResource, type SyncRecord, type SyncRecords } from './sync-records.js';
import { toPollerResource, type Pollers } from './pollers.js';
import type { SyncRunner } from './sync-runner.js';

export interface SyncRouteDeps {
  records: SyncRecords;
  runner: SyncRunner;
  pollers: Pollers;
  opcos: OpcoDirectory;
  clock: Clock;
}

export function mountSyncRoutes(api: PluginApi<unknown>, deps: SyncRouteDeps): void {
  api.route('startSync', async ({ body, tenant }) => {
    const { opcoId, minYear, enablePoller } = body;
    const opco = knownOpco(deps.opcos, opcoId);
    deps.opcos.route(opco, 'GET /dossiers/etats');
    deps.opcos.route(opco, 'GET /dossiers/liste');
    const syncId = randomUUID();
    await api.heldWork.admit(tenant, 'syncs', 0, async () => {
      await deps.records.lock(tenant.hash, opcoId, syncId);
      const now = deps.clock.date();
      const sync: SyncRecord = {
        _id: syncId,
        tenant: tenant.hash,
        opcoId,
        status: 'pending',
        minYear: minYear ?? null,
        enablePoller: enablePoller ?? false,
        apiKey: deps.records.sealKey(syncId, tenant.apiKey),
        phase: 'discovery',
        total: 0,
        discovered: 0,
        fetched: 0,
        progress: 0,
        batchesCompleted: 0,
        totalBatches: 0,
        estimatedEnd: null,
        error: null,
        startedAt: now,
        fetchStartedAt: null,
        completedAt: null,
        ...unleased(now),
        ...(tenant.unprovenFrom !== undefined ? { heldFrom: tenant.unprovenFrom } : {}),
      };
      try {
        await deps.records.insert(sync);
        await deps.runner.publish({ kind: 'sync-discovery', syncId, tenant: tenant.hash });
      } catch (err) {
        await Promise.allSettled([deps.records.discard(syncId), deps.records.unlock(sync)]);
        const error = asServiceError(err);
        if (error.code === 'UNAVAILABLE')
          throw createError('UNAVAILABLE', 'the sync could not be stored or queued; nothing was started, retry later', {
            cause: err,
            headers: error.headers,
          });
        throw error;
      }
    });
    return { status: 202, body: { syncId, status: 'pending', statusUrl: `/sync/${syncId}` } };
  });

  api.route('getSync', async ({ params, tenant }) => {
    const sync = await deps.records.findForTenant(params.syncId, tenant.hash);
    if (!sync) throw createError('NOT_FOUND', `sync ${params.syncId} not found`);
    return { status: 200, body: toResource(sync) };
  });

  api.route('cancelSync', async ({ params, tenant }) => {
    const cancelled = await deps.records.cancel(params.syncId, tenant.hash);
    if (cancelled) {
      await deps.records.unlock(cancelled);
      await deps.runner.cancelled(cancelled);
      return { status: 200, body: { syncId: cancelled._id, status: 'cancelled' } };
    }
    const sync = await deps.records.findForTenant(params.syncId, tenant.hash);
    if (!sync) throw createError('NOT_FOUND', `sync ${params.syncId} not found`);
    const message = `the sync is already ${FINISHED.includes(sync.status) ? 'terminated' : sync.status} (${sync.status})`;
    return { status: 200, body: { syncId: sync._id, status: sync.status, message } };
  });

  api.route('listPollers', async ({ tenant }) => ({
    status: 200,
    body: (await deps.pollers.list(tenant.hash)).map(toPollerResource),
  }));

  api.route('deletePoller', async ({ params, tenant }) => {
    if (!(await deps.pollers.stop(tenant.hash, params.opcoId)))
      throw createError('NOT_FOUND', `no poller for ${params.opcoId}`);
    return { status: 200, body: { deleted: true } };
  });
}

/** D19: opcoId must name a configured OPCO; it is a body field, so a 400 rather than a 404. */
function knownOpco(opcos: OpcoDirectory, opcoId: string) {
  try {
    return opcos.get(opcoId);
  } catch (err) {
    if (!isServiceError(err) || err.code !== 'NOT_FOUND') throw err;
    const message = `opcoId: unknown OPCO "${opcoId}"`;
    throw createError('VALIDATION_ERROR', message, { errors: [message] });
  }
}
