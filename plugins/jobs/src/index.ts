/**
 * The jobs plugin: asynchronous writes (SPEC 1 rule 3, 3.1, 4.8-4.13, 5.4, 8; D15-D18).
 * The `api` role takes submissions, the `worker` role runs them; `serve` does both.
 */
import { definePlugin, type PluginApi } from '@opco-proxy/core';
import { IdempotencyKeys } from './idempotency.js';
import { JobRecords } from './job-records.js';
import { JobSecrets } from './job-secrets.js';
import { mountJobRoutes } from './job-routes.js';
import { JobWorker } from './worker.js';
import { emitJobEnd } from './job-events.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A due job still untaken after this long has lost its queue message. */
const REQUEUE_GRACE_MS = 60_000;

export async function registerJobs(api: PluginApi): Promise<void> {
  const { store, queue, config, log } = api;
  const records = new JobRecords(store);
  const secrets = new JobSecrets(store, config.masterKey);
  const idempotency = new IdempotencyKeys(store);
  await records.prepare();
  await secrets.prepare();

  if (api.role !== 'worker') {
    mountJobRoutes(api.router, { records, secrets, idempotency, queue, opcos: api.opcos, fileBytes: config.limits.fileBytes });
  }
  if (api.role === 'api') return;

  const worker = new JobWorker({
    records, secrets, queue, opcos: api.opcos, pipeline: api.pipeline, emit: api.emit, log, prometheus: api.prometheus,
    backoffMs: config.jobs.backoffMs, leaseMs: config.jobs.leaseMs, prefetch: config.jobs.prefetch,
    retentionMs: config.jobs.retentionDays * DAY_MS,
  });
  const requeueOverdue = async (graceMs: number) => {
    for (const job of await records.overdue(graceMs)) await worker.requeue(job._id);
  };
  const emitOwedEvents = async (graceMs: number) => {
    for (const job of await records.unnotified(graceMs)) await emitJobEnd({ records, emit: api.emit }, job);
  };
  api.hooks.add('ready', async () => {
    // The embedded queue lives in memory: after a restart, every unfinished job is queued again.
    if (queue.kind === 'embedded') {
      await requeueOverdue(-DAY_MS);
      await emitOwedEvents(-DAY_MS);
    }
    await worker.start();
  });
  const sweeper = setInterval(() => {
    void sweep().catch((err) => log.warn({ err }, 'job sweep failed'));
  }, config.jobs.sweepIntervalMs);
  sweeper.unref();
  const sweep = async () => {
    // A job stored but never queued (a crash between the two) or whose message was lost.
    await requeueOverdue(REQUEUE_GRACE_MS);
    await emitOwedEvents(REQUEUE_GRACE_MS);
    await records.jobs.sweepExpired();
    await idempotency.sweep();
    await secrets.sweepFiles(DAY_MS);
    await secrets.sweepSecrets(config.jobs.retentionDays * DAY_MS);
  };
  api.hooks.add('close', async () => {
    clearInterval(sweeper);
    await worker.stop();
  });
}

export default definePlugin({ name: 'jobs', register: registerJobs });
export { JobRecords, toResource } from './job-records.js';
export { JOBS_QUEUE } from './submission.js';
