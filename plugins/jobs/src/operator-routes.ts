/**
 * The jobs plugin's operator route (P9): every tenant's jobs with their errors, newest first,
 * and how many of each status per opcoId. A job shows as its tenant sees it, without the
 * upstream's result (what a tenant sent and got back is not the operator's to read).
 */
import type { OpcoDirectory, PluginApi } from '@opco-proxy/core';
import type { Job } from '@opco-proxy/schemas';
import { toResource, type JobRecord, type JobRecords } from './job-records.js';

export function mountOperatorRoutes(
  api: PluginApi<unknown>,
  deps: { records: JobRecords; opcos: OpcoDirectory },
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
}

function withoutResult(record: JobRecord): Job {
  const { result: _result, steps, ...job } = toResource(record);
  return steps ? { ...job, steps: steps.map(({ result: _stepResult, ...step }) => step) } : job;
}
