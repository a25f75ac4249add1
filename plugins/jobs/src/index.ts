/**
 * The jobs plugin: asynchronous writes (SPEC 1 rule 3, 3.1, 4.8-4.13, 5.4, 8; D15-D18).
 * The `api` role takes submissions, the `worker` role runs them; `serve` does both.
 */
import { definePlugin, type PluginApi } from '@opco-proxy/core';
import { RetryPolicy } from '@opco-proxy/core/durable';
import { IdempotencyKeys } from './idempotency.js';
import { JobRecords } from './job-records.js';
import { JobSecrets } from './job-secrets.js';
import { mountJobRoutes } from './job-routes.js';
import { mountOperatorRoutes } from './operator-routes.js';
import { purgePassedRetryInputs } from './job-retry.js';
import { JOBS_QUEUE } from './submission.js';
import { JobWorker } from './worker.js';
import { emitJobEnd } from './job-events.js';
import type { JobsConfig } from './generated/config.js';

export type { JobsConfig };

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** A due job still untaken after this long has lost its queue message. */
const REQUEUE_GRACE_MS = 60_000;

export async function registerJobs(api: PluginApi<JobsConfig>): Promise<void> {
  const { store, queue, config, log, clock } = api;
  const owner = `jobs-${api.role}-${Math.random().toString(16).slice(2, 10)}`;
  const records = new JobRecords(store, clock, owner);
  const secrets = new JobSecrets(store, api.sealer, clock);
  const idempotency = new IdempotencyKeys(store, clock);
  await records.prepare();
  await secrets.prepare();
  api.heldWork.register(
    records.held({ count: config.tenantPending!.jobs, fileBytes: config.tenantPending!.fileBytes }),
  );

  api.declareQueue(JOBS_QUEUE);
  // A sorted search of every unfinished job where the store cannot use an index for it (FerretDB
  // v1): read no more often than its cost allows (store-gauge.ts).
  api.metrics.ageGauge({
    name: 'opco_proxy_oldest_pending_job_age_seconds',
    help: 'Age of the oldest unfinished job, 0 when none (read from the store at most once a second, less often when the read is slow)',
    since: () => records.oldestUnfinished(),
  });
  if (api.role !== 'worker') {
    const jobsSubmitted = api.metrics.counter({
      name: 'opco_proxy_jobs_submitted_total',
      help: 'Jobs accepted (202; duplicates not counted), by opco',
      labelNames: ['opco'] as const,
    });
    mountJobRoutes(api, {
      records,
      secrets,
      idempotency,
      queue,
      opcos: api.opcos,
      clock,
      heldWork: api.heldWork,
      submitted: (opcoId) => jobsSubmitted.inc({ opco: opcoId }),
    });
    mountOperatorRoutes(api, { records, secrets, queue, clock, log, opcos: api.opcos });
  }
  if (api.role === 'api') return;

  const jobsEnded = api.metrics.counter({
    name: 'opco_proxy_jobs_ended_total',
    help: 'Jobs that ended, by opco, type and final status',
    labelNames: ['opco', 'type', 'status'] as const,
  });
  const worker = new JobWorker({
    records,
    secrets,
    queue,
    opcos: api.opcos,
    pipeline: api.pipeline,
    emit: api.emit,
    log,
    clock,
    jobsEnded,
    retries: new RetryPolicy(config.attempts, config.backoffMs),
    leaseMs: config.leaseMs,
    prefetch: config.prefetch,
    tenantShare: config.tenantShare,
    retentionMs: config.retentionDays * DAY_MS,
    retryWindowMs: config.retryWindowHours * HOUR_MS,
  });
  api.recover({
    name: 'jobs',
    intervalMs: config.sweepIntervalMs,
    graceMs: REQUEUE_GRACE_MS,
    leaseMs: config.leaseMs,
    // A job stored but never queued (a crash between the two) or whose message was lost; and a
    // job that ended without its event (the worker stopped in between).
    requeue: async (dueBefore) => {
      for (const job of await records.overdue(dueBefore)) await worker.requeue(job._id, 0, job.tenant);
      for (const job of await records.unnotified(dueBefore)) await emitJobEnd({ records, emit: api.emit }, job);
    },
  });
  api.every('expiry', config.sweepIntervalMs, async () => {
    await records.sweepExpired();
    await idempotency.sweep();
    await secrets.sweepFiles(DAY_MS);
    // A failed job's inputs kept for an operator's retry go when its window ends (P23).
    await purgePassedRetryInputs({ records, secrets });
    await secrets.sweepSecrets(config.retentionDays * DAY_MS);
  });
  api.addHook('ready', () => worker.start());
  api.addHook('close', ({ deadline }) => worker.stop(deadline));
}

export default definePlugin({ name: 'jobs', register: registerJobs });
export { JobRecords, toResource } from './job-records.js';
export { JOBS_QUEUE } from './submission.js';
