/**
 * The job's domain events (SPEC 6.1, D22) through the `event` hook. Ids are derived from the
 * job, so an event emitted twice (a crash between emitting and recording it) is the same event
 * and the webhook outbox keeps one.
 */
import type { PluginApi } from '@opco-proxy/core';
import { errorResource, type JobRecord, type JobRecords } from './job-records.js';

interface EventDeps {
  records: JobRecords;
  emit: PluginApi['emit'];
}

export async function emitProgress(deps: EventDeps, job: JobRecord, stepNumber: number): Promise<void> {
  const step = job.steps.find((s) => s.step === stepNumber)!;
  await deps.emit({
    id: `${job._id}:progress:${stepNumber}`,
    type: 'job.progress',
    tenant: job.tenant,
    opcoId: job.opcoId,
    data: {
      jobId: job._id,
      type: job.type,
      step: stepNumber,
      totalSteps: job.steps.length,
      name: step.name,
      status: step.status,
    },
  });
}

/** Emits job.completed or job.failed once the job has ended, then records that it did. */
export async function emitJobEnd(deps: EventDeps, job: JobRecord): Promise<void> {
  if (job.notified !== false) return;
  const completed = job.status === 'completed';
  await deps.emit({
    id: `${job._id}:${job.status}`,
    type: completed ? 'job.completed' : 'job.failed',
    tenant: job.tenant,
    opcoId: job.opcoId,
    data: completed
      ? {
          jobId: job._id,
          type: job.type,
          status: job.status,
          result: job.resultJson === undefined ? {} : JSON.parse(job.resultJson),
          completedAt: job.completedAt?.toISOString(),
        }
      : {
          jobId: job._id,
          type: job.type,
          status: job.status,
          error: job.error ? errorResource(job.error) : undefined,
          retries: job.retries,
        },
  });
  await deps.records.markNotified(job._id);
}
