/**
 * An operator's retry of failed jobs (issue 42, P23): a failed job whose sealed inputs are still
 * kept goes back to `pending` under its own id and history, and the worker takes it as it takes
 * any due job: completed steps skipped, a step whose answer may have been lost looked up upstream
 * first (D18), so nothing the upstream took is sent twice. Its end is told to its tenant's
 * webhooks again. A job whose inputs or files were purged stays failed: its tenant submits it anew.
 */
import { createError, PRIORITY, type Clock, type Logger, type Queue } from '@opco-proxy/core';
import type { AdminJobRetried } from '@opco-proxy/schemas';
import type { FailedJobFilter, JobRecord, JobRecords } from './job-records.js';
import type { JobSecrets } from './job-secrets.js';
import { JOBS_QUEUE } from './submission.js';
import type { JobMessage } from './worker.js';

export interface RetryDeps {
  records: JobRecords;
  secrets: JobSecrets;
  queue: Queue;
  clock: Clock;
  log: Logger;
}

export type Retryability = { possible: true; until: Date } | { possible: false; reason: string };

/** The most jobs one bulk retry sends back (the answer's `more` says when others matched). */
export const BULK_LIMIT = 1000;

export async function retryability(deps: RetryDeps, job: JobRecord): Promise<Retryability> {
  const window = retryWindow(deps, job);
  if (!window.possible) return window;
  return (await deps.secrets.kept(job)) ? window : FILES_DELETED;
}

const FILES_DELETED: Retryability = {
  possible: false,
  reason: 'its files were deleted 24 hours after their upload (D17); its tenant submits it anew',
};

/** Whether the job failed and its retry window is open; its inputs are not looked at. */
function retryWindow(deps: Pick<RetryDeps, 'clock'>, job: JobRecord): Retryability {
  if (job.status !== 'failed')
    return { possible: false, reason: `the job is ${job.status}: only failed jobs are retried` };
  const until = job.retryableUntil;
  if (until === undefined || until.getTime() <= deps.clock.now())
    return {
      possible: false,
      reason:
        'its sealed inputs were purged (at once when the upstream refused it, jobs.retryWindowHours after an outage failed it); its tenant submits it anew',
    };
  return { possible: true, until };
}

/** Sends one failed job back; CONFLICT when it cannot be retried. */
export async function retryJob(deps: RetryDeps, job: JobRecord): Promise<JobRecord> {
  const check = await retryability(deps, job);
  if (!check.possible) throw createError('CONFLICT', `job ${job._id} cannot be retried: ${check.reason}`);
  const pending = await deps.records.retry(job);
  if (!pending) throw createError('CONFLICT', `job ${job._id} changed meanwhile (retried by another operator?)`);
  await queueAgain(deps, pending);
  return pending;
}

/** Every failed job of the filter, up to `limit`; with `dryRun`, only counted. */
export async function retryJobs(
  deps: RetryDeps,
  filter: FailedJobFilter,
  options: { dryRun: boolean; limit: number },
): Promise<{ answer: AdminJobRetried; retried: JobRecord[] }> {
  const matched = await deps.records.failed(filter, options.limit + 1);
  const more = matched.length > options.limit;
  const jobs = matched.slice(0, options.limit);
  const inWindow = jobs.filter((job) => retryWindow(deps, job).possible);
  const kept = await deps.secrets.keptOf(inWindow);
  const retried: JobRecord[] = [];
  const notRetryable = jobs.length - kept.size;
  for (const job of inWindow) {
    if (!kept.has(job._id)) continue;
    if (options.dryRun) {
      retried.push(job);
      continue;
    }
    const pending = await deps.records.retry(job);
    if (!pending) continue;
    await queueAgain(deps, pending);
    retried.push(pending);
  }
  return {
    answer: {
      dryRun: options.dryRun,
      matched: jobs.length,
      retried: retried.length,
      notRetryable,
      jobIds: retried.map((job) => job._id),
      more,
    },
    retried,
  };
}

/** The periodic expiry's part (P23): the inputs of failed jobs whose retry window passed are purged. */
export async function purgePassedRetryInputs(deps: Pick<RetryDeps, 'records' | 'secrets'>): Promise<number> {
  let purged = 0;
  for (const job of await deps.records.retryWindowPassed()) {
    if (!(await deps.records.dropInputs(job))) continue;
    await deps.secrets.purge(job);
    purged++;
  }
  return purged;
}

/** A lost publish is not a lost retry: the job is due, and the overdue sweep queues it again. */
async function queueAgain(deps: RetryDeps, job: JobRecord): Promise<void> {
  const message: JobMessage = { jobId: job._id, tenant: job.tenant };
  await deps.queue.publish(JOBS_QUEUE, message, { priority: PRIORITY.client }).catch((err: unknown) => {
    deps.log.warn({ jobId: job._id, err }, 'retried job not queued; the overdue sweep queues it');
  });
}
