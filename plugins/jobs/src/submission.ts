/**
 * The asynchronous POST operations (SPEC 1 rule 3, 3.1, 4.0.4, 4.8-4.12b): the operation router
 * has validated the body and decoded its files (D7: each `_files` entry arrives as its bytes); here
 * the Idempotency-Key is reserved, the job and its sealed inputs stored, then its id queued. If
 * the store or the queue fails, everything stored is removed and the client gets 503: nothing is
 * half-accepted.
 */
import { randomUUID } from 'node:crypto';
import {
  PRIORITY,
  asServiceError,
  createError,
  type Clock,
  type OpcoDirectory,
  type PluginApi,
  type Queue,
  type Tenant,
} from '@opco-proxy/core';
import { unleased } from '@opco-proxy/core/durable';
import type { AsyncAccepted } from '@opco-proxy/schemas';
import { IdempotencyKeys } from './idempotency.js';
import { planSteps, routesOf, type JobKind } from './job-plan.js';
import type { JobRecords } from './job-records.js';
import type { JobSecrets, SealedInputs } from './job-secrets.js';

export const JOBS_QUEUE = 'jobs';

export interface Accepted {
  status: 202 | 200;
  body: AsyncAccepted;
}

export interface SubmissionDeps {
  records: JobRecords;
  secrets: JobSecrets;
  idempotency: IdempotencyKeys;
  queue: Queue;
  opcos: OpcoDirectory;
  clock: Clock;
  /** Bounds what tenants the upstream has not accepted yet keep stored (P13). */
  heldWork: PluginApi['heldWork'];
}

/** What the submission's HTTP request brings besides the body. */
export interface SubmissionRequest {
  idempotencyKey?: string;
  /** The request's X-Request-Id: the job's upstream calls and log lines carry it. */
  requestId?: string;
  /** The request's W3C trace context: the job's upstream calls join the client's trace. */
  traceparent?: string;
}

export async function submitJob(
  deps: SubmissionDeps,
  kind: JobKind,
  opcoId: string,
  tenant: Tenant,
  body: Record<string, unknown>,
  request: SubmissionRequest = {},
): Promise<Accepted> {
  const opco = deps.opcos.get(opcoId);
  // Each file as the pages the router decoded it into; sealing takes them (JobSecrets.seal).
  const { _files: files = {}, ...payload } = body as { _files?: Record<string, Buffer[]> } & Record<string, unknown>;
  for (const route of routesOf(kind.type, Object.keys(files))) deps.opcos.route(opco, route);
  const key = IdempotencyKeys.check(request.idempotencyKey);

  const jobId = randomUUID();
  let releaseKey = async () => {};
  if (key !== undefined) {
    const reservation = await deps.idempotency.reserve(tenant.hash, key, jobId, body, { opcoId, type: kind.type });
    if (!reservation.fresh) {
      const statusUrl = `/${reservation.opcoId ?? opcoId}/jobs/${reservation.jobId}`;
      const accepted: AsyncAccepted = { jobId: reservation.jobId, status: 'duplicate', statusUrl };
      if (reservation.payloadDiffers) accepted.warning = 'payload differs from the original request';
      return { status: 200, body: accepted };
    }
    releaseKey = reservation.release;
  }

  const fileBytes = Object.values(files).reduce(
    (sum, pages) => sum + pages.reduce((bytes, page) => bytes + page.length, 0),
    0,
  );
  let stored = false;
  try {
    await deps.heldWork.admit(tenant, 'jobs', fileBytes, () => {
      stored = true;
      return storeJob(deps, { jobId, kind, opcoId, tenant, payload, files, fileBytes, request }, releaseKey);
    });
  } catch (err) {
    // Refused before anything was stored (the unproven tenants of its address hold too much).
    if (!stored) await releaseKey();
    throw err;
  }
  return { status: 202, body: { jobId, status: 'pending', statusUrl: `/${opcoId}/jobs/${jobId}` } };
}

interface NewJob {
  jobId: string;
  kind: JobKind;
  opcoId: string;
  tenant: Tenant;
  payload: Record<string, unknown>;
  files: Record<string, Buffer[]>;
  fileBytes: number;
  request: SubmissionRequest;
}

/** Stores the job and its sealed inputs, then queues its id; undoes all of it when any part fails. */
async function storeJob(deps: SubmissionDeps, job: NewJob, releaseKey: () => Promise<void>): Promise<void> {
  const { jobId, kind, opcoId, tenant, payload, files, request } = job;
  const now = deps.clock.date();
  let inputs: SealedInputs | undefined;
  try {
    // One write for a job without files: the record carries its sealed inputs.
    inputs = await deps.secrets.seal(jobId, { apiKey: tenant.apiKey, body: payload, files });
    await deps.records.insert({
      _id: jobId,
      tenant: tenant.hash,
      opcoId,
      type: kind.type,
      status: 'pending',
      retries: 0,
      createdAt: now,
      startedAt: null,
      completedAt: null,
      steps: planSteps(kind.type, Object.keys(files)),
      ...unleased(now),
      inputs,
      ...(request.requestId ? { requestId: request.requestId } : {}),
      ...(request.traceparent ? { traceparent: request.traceparent } : {}),
      ...(job.fileBytes > 0 ? { fileBytes: job.fileBytes } : {}),
      ...(tenant.unprovenFrom !== undefined ? { heldFrom: tenant.unprovenFrom } : {}),
    });
    await deps.queue.publish(JOBS_QUEUE, { jobId, tenant: tenant.hash }, { priority: PRIORITY.client });
  } catch (err) {
    await Promise.allSettled([deps.records.discard(jobId), deps.secrets.purge({ _id: jobId, inputs }), releaseKey()]);
    const error = asServiceError(err);
    if (error.code === 'UNAVAILABLE')
      throw createError('UNAVAILABLE', 'the job could not be stored or queued; nothing was accepted, retry later', {
        cause: err,
        headers: error.headers,
      });
    throw error;
  }
}
