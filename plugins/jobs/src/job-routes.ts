/** HTTP side of jobs: the five POST routes (SPEC 4.8-4.12b) and GET /{opcoId}/jobs/{jobId} (4.13). */
import { createError, type Tenant } from '@opco-proxy/core';
import type { PluginRoutes } from '@opco-proxy/core';
import { JOB_KINDS } from './job-plan.js';
import { toResource, type JobRecords } from './job-records.js';
import { submitJob, type SubmissionDeps } from './submission.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mountJobRoutes(router: PluginRoutes, deps: SubmissionDeps & { records: JobRecords }): void {
  for (const kind of JOB_KINDS) {
    router.post(kind.path, async (ctx) => {
      const tenant = ctx.state.tenant as Tenant;
      const header = ctx.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(header) ? header[0] : header; // sent empty: refused, not ignored
      const accepted = await submitJob(deps, kind, ctx.params.opcoId, tenant, (ctx.request as { body?: unknown }).body, idempotencyKey);
      ctx.status = accepted.status;
      ctx.body = accepted.body;
    });
  }
  router.get('/:opcoId/jobs/:jobId', async (ctx) => {
    const tenant = ctx.state.tenant as Tenant;
    deps.opcos.get(ctx.params.opcoId);
    const job = UUID.test(ctx.params.jobId) ? await deps.records.findForTenant(ctx.params.jobId, tenant.hash, ctx.params.opcoId) : null;
    if (!job) throw createError('NOT_FOUND', `job ${ctx.params.jobId} not found`);
    ctx.body = toResource(job);
  });
}
