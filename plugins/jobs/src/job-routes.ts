/** HTTP side of jobs: the five POST operations (SPEC 4.8-4.12b) and GET /{opcoId}/jobs/{jobId} (4.13). */
import { createError, type PluginApi } from '@opco-proxy/core';
import { JOB_OPERATIONS, kindOfOperation } from './job-plan.js';
import { isJobId, toResource, type JobRecords } from './job-records.js';
import { submitJob, type SubmissionDeps } from './submission.js';

export function mountJobRoutes(
  api: PluginApi<unknown>,
  deps: SubmissionDeps & { records: JobRecords; submitted(opcoId: string): void },
): void {
  for (const operation of JOB_OPERATIONS) {
    const kind = kindOfOperation(operation);
    api.route(operation, async ({ params, tenant, body, header, requestId, traceparent }) => {
      // An Idempotency-Key sent empty is refused, not ignored (IdempotencyKeys.check).
      const accepted = await submitJob(deps, kind, params.opcoId, tenant, body as unknown as Record<string, unknown>, {
        idempotencyKey: header('idempotency-key'),
        requestId,
        traceparent,
      });
      if (accepted.status === 202) deps.submitted(params.opcoId);
      return accepted;
    });
  }
  api.route('getJob', async ({ params, tenant }) => {
    deps.opcos.get(params.opcoId);
    const job = isJobId(params.jobId)
      ? await deps.records.findForTenant(params.jobId, tenant.hash, params.opcoId)
      : null;
    if (!job) throw createError('NOT_FOUND', `job ${params.jobId} not found`);
    return { status: 200, body: toResource(job) };
  });
}
