/**
 * The sync plugin: bulk sync of a CFA's dossiers and the pollers that follow it (SPEC 1 rule 4,
 * 2.6, 3.2, 4.14, 6.1; D19-D21). Routes on the API side; discovery, batches and polls on workers.
 */
import { definePlugin, type PluginApi } from '@opco-proxy/core';
import { Snapshots } from './snapshots.js';
import { Pollers } from './pollers.js';
import { SyncRecords, type SyncRecord } from './sync-records.js';
import { SYNC_QUEUE, SyncRunner, type SyncMessage } from './sync-runner.js';
import { mountSyncRoutes } from './sync-routes.js';

/** A due sync message still unhandled after this long was lost (or never published). */
const REQUEUE_GRACE_MS = 60_000;
const POLL_TICK_MS = 1000;

export async function registerSync(api: PluginApi): Promise<void> {
  const { store, config, log, queue } = api;
  const records = new SyncRecords(store, config.masterKey);
  const snapshots = new Snapshots(store);
  const pollers = new Pollers(store, config.masterKey, { opcos: api.opcos, pipeline: api.pipeline, snapshots, emit: api.emit, log });
  await Promise.all([records.prepare(), snapshots.prepare(), pollers.prepare()]);
  const runner = new SyncRunner({
    opcos: api.opcos, pipeline: api.pipeline, records, snapshots, queue, emit: api.emit, log, prometheus: api.prometheus,
    backoffMs: config.jobs.backoffMs, leaseMs: config.jobs.leaseMs,
    onCompleted: async (sync: SyncRecord) => {
      if (sync.enablePoller) await pollers.start({ hash: sync.tenant, apiKey: records.apiKeyOf(sync) }, sync.opcoId, sync.startedAt);
    },
  });

  if (api.role !== 'worker') mountSyncRoutes(api.router, { records, runner, pollers, opcos: api.opcos });
  if (api.role === 'api') return;

  const requeue = async (graceMs: number) => {
    const before = new Date(Date.now() - graceMs);
    const free = { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: new Date() } }] };
    for (const sync of await records.syncs.find({ status: { $in: ['pending', 'processing'] }, phase: 'discovery', startedAt: { $lte: before }, ...free })) {
      await runner.publish({ kind: 'sync-discovery', syncId: sync._id });
    }
    const running = await records.syncs.find({ status: 'processing', phase: 'fetch', startedAt: { $lte: before } });
    for (const sync of running) {
      for (const batch of await records.batches.find({ syncId: sync._id, status: 'pending', ...free })) {
        await runner.publish({ kind: 'sync-batch', syncId: sync._id, batch: batch.batch });
      }
    }
  };
  let polling = false;
  const timers: NodeJS.Timeout[] = [];
  api.hooks.add('ready', async () => {
    // The embedded queue forgets everything on restart: D20 resumes from the store.
    if (queue.kind === 'embedded') await requeue(-REQUEUE_GRACE_MS);
    const consumer = await queue.consume<SyncMessage>(SYNC_QUEUE, (message) => runner.handle(message.body), { prefetch: config.jobs.prefetch });
    api.hooks.add('close', () => consumer.cancel());
    timers.push(setInterval(() => void requeue(REQUEUE_GRACE_MS).catch((err) => log.warn({ err }, 'sync requeue failed')), REQUEUE_GRACE_MS));
    timers.push(setInterval(() => {
      if (polling) return;
      polling = true;
      pollers.runDue().catch((err) => log.warn({ err }, 'polling failed')).finally(() => (polling = false));
    }, POLL_TICK_MS));
    for (const timer of timers) timer.unref();
  });
  api.hooks.add('close', () => timers.forEach(clearInterval));
}

export default definePlugin({ name: 'sync', register: registerSync });
export { SyncRecords } from './sync-records.js';
