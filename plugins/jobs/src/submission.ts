/**
 * The asynchronous POST operations (SPEC 1 rule 3, 3.1, 4.0.4, 4.8-4.12b): the operation router
 * has validated the body; here the files are decoded (D7), the Idempotency-Key reserved, the job
 * and its sealed inputs stored, then its id queued. If the store or the queue fails, everything
 * stored is removed and the client gets 503: nothing is half-accepted.
 */
import { randomUUID } from 'node:crypto';
import { PRIORITY, asServiceError, createError, type Clock, type OpcoDirectory, type Queue, type Tenant } from '@opco-proxy/core';
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
  fileBytes: number;
}

/** What the submission's HTTP request brings besides the body. */
export interface SubmissionRequest {
  idempotencyKey?: string;
  /** The request's X-Request-Id: the job's upstream calls and log lines carry it. */
  requestId?: string;
  /** The request's W3C trace context: the job's upstream calls join the client's trace. */
  traceparent?: string;
}

export async function submitJob(deps: SubmissionDeps, kind: JobKind, opcoId: string, tenant: Tenant, body: Record<string, unknown>, request: SubmissionRequest = {}): Promise<Accepted> {
  const opco = deps.opcos.get(opcoId);
  const { _files: encoded, ...payload } = body as { _files?: Record<string, string> } & Record<string, unknown>;
  const files = decodeFiles(encoded ?? {}, deps.fileBytes);
  for (const route of routesOf(kind.type, Object.keys(files))) deps.opcos.route(opco, route);
  const key = IdempotencyKeys.check(request.idempotencyKey);

  const jobId = randomUUID();
  let releaseKey = async () => {};
  if (key !== undefined) {
    const reservation = await deps.idempotency.reserve(tenant.hash, key, jobId, body);
    if (!reservation.fresh) {
      const accepted: AsyncAccepted = { jobId: reservation.jobId, status: 'duplicate', statusUrl: `/${opcoId}/jobs/${reservation.jobId}` };
      if (reservation.payloadDiffers) accepted.warning = 'payload differs from the original request';
      return { status: 200, body: accepted };
    }
    releaseKey = reservation.release;
  }

  const now = deps.clock.date();
  let inputs: SealedInputs | undefined;
  try {
    // One write for a job without files: the record carries its sealed inputs.
    inputs = await deps.secrets.seal(jobId, { apiKey: tenant.apiKey, body: payload, files });
    await deps.records.insert({
      _id: jobId, tenant: tenant.hash, opcoId, type: kind.type, status: 'pending', retries: 0,
      createdAt: now, startedAt: null, completedAt: null, steps: planSteps(kind.type, Object.keys(files)),
      leaseOwner: null, leaseUntil: null, nextAttemptAt: now, inputs, ...(request.requestId ? { requestId: request.requestId } : {}), ...(request.traceparent ? { traceparent: request.traceparent } : {}),
    });
    await deps.queue.publish(JOBS_QUEUE, { jobId }, { priority: PRIORITY.client });
  } catch (err) {
    await Promise.allSettled([deps.records.discard(jobId), deps.secrets.purge({ _id: jobId, inputs }), releaseKey()]);
    const error = asServiceError(err);
    if (error.code === 'UNAVAILABLE') throw createError('UNAVAILABLE', 'the job could not be stored or queued; nothing was accepted, retry later', { cause: err, headers: error.headers });
    throw error;
  }
  return { status: 202, body: { jobId, status: 'pending', statusUrl: `/${opcoId}/jobs/${jobId}` } };
}

/** D7: each file is valid base64 of at most `fileBytes` once decoded. */
function decodeFiles(encoded: Record<string, string>, fileBytes: number): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  const errors: string[] = [];
  for (const [role, value] of Object.entries(encoded)) {
    const compact = value.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
      errors.push(`_files.${role}: Invalid base64`);
      continue;
    }
    const content = Buffer.from(compact, 'base64');
    if (content.length > fileBytes) {
      throw createError('PAYLOAD_TOO_LARGE', `_files.${role}: file of ${content.length} bytes is over the ${fileBytes}-byte limit`);
    }
    files[role] = content;
  }
  if (errors.length > 0) throw createError('VALIDATION_ERROR', 'invalid files', { errors });
  return files;
}
