/**
 * The sync plugin: bulk sync of a CFA's dossiers and the pollers that follow it (SPEC 1 rule 4,
 * 2.6, 3.2, 4.14, 6.1; D19-D21). Operations on the API side; discovery, batches and polls on workers.
 */
import { definePlugin, randomHex, settlesBy, type PluginApi } from '@opco-proxy/core';
import { overShareDelayMs, RetryPolicy, TenantSlots } from '@opco-proxy/core/durable';
import { Snapshots } from './snapshots.js';
import { Pollers } from './pollers.js';
import { SyncRecords, type SyncRecord } from './sync-records.js';
import { SYNC_QUEUE, SyncRunner, type SyncMessage } from './sync-runner.js';
import { mountSyncRoutes } from './sync-routes.js';
import { mountOperatorRoutes } from './operator-routes.js';
import type { SyncConfig } from './generated/config.js';

export type { SyncConfig };

/** A due sync message still unhandled after this long was lost (or never published). */
const REQUEUE_GRACE_MS = 60_000;

export async function registerSync(api: PluginApi<SyncConfig>): Promise<void> {
  const { store, config, log, queue, clock } = api;
  const owner = `sync-${randomHex(4)}`;
  const records = new SyncRecords(store, api.sealer, clock, owner);
  const snapshots = new Snapshots(store, clock);
  const pollers = new Pollers(
    store,
    {
      opcos: api.opcos,
      pipeline: api.pipeline,
      snapshots,
      emit: api.emit,
      log,
      clock,
      sealer: api.sealer,
      leaseMs: config.leaseMs,
    },
    owner,
  );
  await Promise.all([records.prepare(), snapshots.prepare(), pollers.prepare()]);
  api.heldWork.register(records.held());
  const syncsEnded = api.metrics.counter({
    name: 'opco_proxy_syncs_ended_total',
    help: 'Bulk syncs that ended, by final status',
    labelNames: ['status'] as const,
  });
  // Runs in worker roles only. Woken when this process starts a poller (at the end of a sync): its
  // first poll is then not left to the idle wait of up to `sweepIntervalMs`.
  const polls = api.every('polls', config.pollTickMs, () => pollers.tick(config.pollTickMs, config.sweepIntervalMs));
  const runner = new SyncRunner({
    opcos: api.opcos,
    pipeline: api.pipeline,
    records,
    snapshots,
    queue,
    emit: api.emit,
    log,
    clock,
    syncsEnded,
    retries: new RetryPolicy(config.attempts, config.backoffMs),
    leaseMs: config.leaseMs,
    onCompleted: async (sync: SyncRecord) => {
      if (!sync.enablePoller) return;
      await pollers.start({ hash: sync.tenant, apiKey: records.apiKeyOf(sync) }, sync.opcoId, sync.startedAt);
      polls.wake();
    },
  });

  api.declareQueue(SYNC_QUEUE);
  if (api.role !== 'worker') {
    mountSyncRoutes(api, { records, runner, pollers, opcos: api.opcos, clock });
    mountOperatorRoutes(api, { records, pollers });
  }
  if (api.role === 'api') return;

  api.recover({
    name: 'sync',
    intervalMs: config.sweepIntervalMs,
    graceMs: REQUEUE_GRACE_MS,
    leaseMs: config.leaseMs,
    requeue: async (dueBefore) => {
      for (const sync of await records.overdueDiscoveries(dueBefore))
        await runner.publish({ kind: 'sync-discovery', syncId: sync._id });
      for (const batch of await records.overdueBatches(dueBefore))
        await runner.publish({ kind: 'sync-batch', syncId: batch.syncId, batch: batch.batch });
    },
  });
  let consumer: { cancel(): Promise<void> } | undefined;
  api.addHook('ready', async () => {
    // One tenant's batches hold at most a share of the slots: another tenant's sync is not queued behind a bulk one (issue 38).
    const slots = new TenantSlots(config.prefetch, config.tenantShare, clock);
    consumer = await queue.consume<SyncMessage>(
      SYNC_QUEUE,
      async (message) => {
        if (await slots.run(message.body.tenant, () => runner.handle(message.body))) return;
        const turns = (message.body.turns ?? 0) + 1;
        await runner.publish({ ...message.body, turns }, overShareDelayMs(turns - 1));
      },
      { prefetch: config.prefetch },
    );
  });
  api.addHook('close', async ({ deadline }) => {
    await settlesBy(clock, deadline, consumer?.cancel());
  });
}

export default definePlugin({ name: 'sync', register: registerSync });
export { SyncRecords } from './sync-records.js';
