/**
 * The jobs plugin's operator routes (P9): every tenant's jobs with their errors, newest first,
 * and how many of each status per opcoId; one job opened; failed jobs sent back to pending (P23).
 * A job shows as its tenant sees it, without the upstream's result (what a tenant sent and got
 * back is not the operator's to read), and never its body, key or files.
 */
import { createError, type OpcoDirectory, type PluginApi } from '@opco-proxy/core';
import type { AdminJob, Job } from '@opco-proxy/schemas';
import { isJobId, toResource, type JobRecord, type JobRecords } from './job-records.js';
import { BULK_LIMIT, retryability, retryJob, retryJobs, type RetryDeps } from './job-retry.js';

export function mountOperatorRoutes(
  api: PluginApi<unknown>,
  deps: RetryDeps & { records: JobRecords; opcos: OpcoDirectory },
): void {
  api.route('listAdminJobs', async ({ query }) => {
    const { status, opcoId } = query;
    const opcoIds = opcoId ? [opcoId] : deps.opcos.list().map((opco) => opco.id);
    const [page, counts] = await Promise.all([
      deps.records.pageAll({ status, opcoId }, { limit: query.limit ? Number(query.limit) : 50, cursor: query.cursor }),
      Promise.all(opcoIds.map(async (id) => ({ opcoId: id, ...(await deps.records.countByStatus(id)) }))),
    ]);
    return {
      status: 200,
      body: {
        counts,
        items: page.records.map((job) => ({ tenant: job.tenant, job: withoutResult(job) })),
        next: page.next ?? null,
      },
    };
  });

  const found = async (jobId: string): Promise<JobRecord> => {
    const job = isJobId(jobId) ? await deps.records.get(jobId) : null;
    if (!job) throw createError('NOT_FOUND', `job ${jobId} not found`);
    return job;
  };

  api.route('getAdminJob', async ({ params }) => {
    const job = await found(params.jobId);
    const retry = await retryability(deps, job);
    const body: AdminJob = {
      tenant: job.tenant,
      job: withoutResult(job),
      steps: job.steps.map(({ step, name, status, attempts, uncertain }) => ({
        step,
        name,
        status,
        attempts,
        uncertain: uncertain === true,
      })),
      retry: retry.possible
        ? { possible: true, until: retry.until.toISOString(), reason: null }
        : { possible: false, until: null, reason: retry.reason },
      operatorRetries: job.operatorRetries ?? 0,
    };
    return { status: 200, body };
  });

  api.route('retryAdminJob', async ({ params }) => {
    const job = await retryJob(deps, await found(params.jobId));
    // The audit record (D32) names the tenant the operator acted for.
    return {
      status: 202,
      body: { jobId: job._id, status: 'pending', statusUrl: `/${job.opcoId}/jobs/${job._id}` },
      audit: { tenant: job.tenant, opcoId: job.opcoId, targets: { jobId: job._id } },
    };
  });

  api.route('retryAdminJobs', async ({ body }) => {
    const { dryRun = false, limit = BULK_LIMIT, ...filter } = body;
    const { answer, retried } = await retryJobs(deps, filter, { dryRun, limit });
    return {
      status: 200,
      body: answer,
      // One record per job retried (D32); a dry run or a retry of nothing is the request's one record.
      audit: dryRun
        ? {}
        : { each: retried.map((job) => ({ tenant: job.tenant, opcoId: job.opcoId, targets: { jobId: job._id } })) },
    };
  });
}

function withoutResult(record: JobRecord): Job {
  const { result: _result, steps, ...job } = toResource(record);
  return steps ? { ...job, steps: steps.map(({ result: _stepResult, ...step }) => step) } : job;
}
