/** The sync routes of SPEC 4.14 and the poller routes of D21; each tenant sees only its own. */
import { randomUUID } from 'node:crypto';
import { checkBody, createError, isServiceError, type OpcoRegistry, type Tenant } from '@opco-proxy/core';
import type { PluginRoutes } from '@opco-proxy/core';
import { FINISHED, toResource, type SyncRecords } from './sync-records.js';
import { toPollerResource, type Pollers } from './pollers.js';
import type { SyncRunner } from './sync-runner.js';

export interface SyncRouteDeps {
  records: SyncRecords;
  runner: SyncRunner;
  pollers: Pollers;
  opcos: OpcoRegistry;
}

export function mountSyncRoutes(router: PluginRoutes, deps: SyncRouteDeps): void {
  const tenantOf = (ctx: { state: { tenant?: Tenant } }) => ctx.state.tenant!;

  router.post('/sync/dossiers', async (ctx) => {
    const body = (ctx.request as { body?: unknown }).body;
    const { opcoId, minYear, enablePoller } = checkBody<{ opcoId: string; minYear?: number; enablePoller?: boolean }>('sync-body', body);
    const opco = knownOpco(deps.opcos, opcoId);
    deps.opcos.route(opco, 'GET /dossiers/etats');
    deps.opcos.route(opco, 'GET /dossiers/liste');
    const tenant = tenantOf(ctx);
    const syncId = randomUUID();
    await deps.records.lock(tenant.hash, opcoId, syncId);
    const sync = {
      _id: syncId, tenant: tenant.hash, opcoId, status: 'pending' as const, minYear: minYear ?? null, enablePoller: enablePoller ?? false,
      apiKey: deps.records.sealKey(syncId, tenant.apiKey), phase: 'discovery' as const, total: 0, discovered: 0, fetched: 0, progress: 0,
      batchesCompleted: 0, totalBatches: 0, estimatedEnd: null, error: null, startedAt: new Date(), fetchStartedAt: null, completedAt: null,
      leaseOwner: null, leaseUntil: null,
    };
    try {
      await deps.records.syncs.insertOne(sync);
      await deps.runner.publish({ kind: 'sync-discovery', syncId });
    } catch (err) {
      await Promise.allSettled([deps.records.syncs.deleteOne({ _id: syncId }), deps.records.unlock(sync)]);
      throw createError('UNAVAILABLE', 'the sync could not be queued; nothing was started, retry later', { cause: err });
    }
    ctx.status = 202;
    ctx.body = { syncId, status: 'pending', statusUrl: `/sync/${syncId}` };
  });

  router.get('/sync/:syncId', async (ctx) => {
    const sync = await deps.records.findForTenant(ctx.params.syncId, tenantOf(ctx).hash);
    if (!sync) throw createError('NOT_FOUND', `sync ${ctx.params.syncId} not found`);
    ctx.body = toResource(sync);
  });

  router.delete('/sync/:syncId', async (ctx) => {
    const tenant = tenantOf(ctx).hash;
    const cancelled = await deps.records.syncs.findOneAndUpdate(
      { _id: ctx.params.syncId, tenant, status: { $in: ['pending', 'processing'] } },
      { $set: { status: 'cancelled', completedAt: new Date(), leaseOwner: null, leaseUntil: null } },
    );
    if (cancelled) {
      await deps.records.unlock(cancelled);
      await deps.runner.cancelled(cancelled);
      ctx.body = { syncId: cancelled._id, status: 'cancelled' };
      return;
    }
    const sync = await deps.records.findForTenant(ctx.params.syncId, tenant);
    if (!sync) throw createError('NOT_FOUND', `sync ${ctx.params.syncId} not found`);
    ctx.body = { syncId: sync._id, status: sync.status, message: `the sync is already ${FINISHED.includes(sync.status) ? 'terminated' : sync.status} (${sync.status})` };
  });

  router.get('/pollers', async (ctx) => {
    ctx.body = (await deps.pollers.list(tenantOf(ctx).hash)).map(toPollerResource);
  });

  router.delete('/pollers/:opcoId', async (ctx) => {
    if (!(await deps.pollers.stop(tenantOf(ctx).hash, ctx.params.opcoId))) throw createError('NOT_FOUND', `no poller for ${ctx.params.opcoId}`);
    ctx.body = { deleted: true };
  });
}

/** D19: opcoId must name a configured OPCO; it is a body field, so a 400 rather than a 404. */
function knownOpco(opcos: OpcoRegistry, opcoId: string) {
  try {
    return opcos.get(opcoId);
  } catch (err) {
    if (!isServiceError(err) || err.code !== 'NOT_FOUND') throw err;
    const message = `opcoId: unknown OPCO "${opcoId}"`;
    throw createError('VALIDATION_ERROR', message, { errors: [message] });
  }
}
