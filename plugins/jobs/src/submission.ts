/**
 * The asynchronous POST routes (SPEC 1 rule 3, 3.1, 4.0.4, 4.8-4.12b): validate, decode the
 * files (D7), reserve the Idempotency-Key, store the job and its sealed inputs, then queue its
 * id. If the queue refuses, everything stored is removed and the client gets 503: nothing is
 * half-accepted.
 */
import { randomUUID } from 'node:crypto';
import { PRIORITY, checkBody, createError, isServiceError, type OpcoRegistry, type Queue, type Tenant } from '@opco-proxy/core';
import { IdempotencyKeys } from './idempotency.js';
import { planSteps, routesOf, type JobKind } from './job-plan.js';
import type { JobRecords } from './job-records.js';
import type { JobSecrets } from './job-secrets.js';

export const JOBS_QUEUE = 'jobs';

export interface Accepted {
  status: 202 | 200;
  body: { jobId: string; status: 'pending' | 'duplicate'; statusUrl: string; warning?: string };
}

export interface SubmissionDeps {
  records: JobRecords;
  secrets: JobSecrets;
  idempotency: IdempotencyKeys;
  queue: Queue;
  opcos: OpcoRegistry;
  fileBytes: number;
}

export async function submitJob(deps: SubmissionDeps, kind: JobKind, opcoId: string, tenant: Tenant, rawBody: unknown, idempotencyKey?: string): Promise<Accepted> {
  const opco = deps.opcos.get(opcoId);
  const body = checkBody(kind.schema, rawBody);
  const { _files: encoded, ...payload } = body as { _files?: Record<string, string> } & Record<string, unknown>;
  const files = decodeFiles(encoded ?? {}, deps.fileBytes);
  for (const route of routesOf(kind.type, Object.keys(files))) deps.opcos.route(opco, route);
  const key = IdempotencyKeys.check(idempotencyKey);

  const jobId = randomUUID();
  const statusUrl = `/${opcoId}/jobs/${jobId}`;
  let releaseKey = async () => {};
  if (key !== undefined) {
    const reservation = await unavailableOnFailure(() => deps.idempotency.reserve(tenant.hash, key, jobId, body));
    if (!reservation.fresh) {
      const accepted: Accepted['body'] = { jobId: reservation.jobId, status: 'duplicate', statusUrl: `/${opcoId}/jobs/${reservation.jobId}` };
      if (reservation.payloadDiffers) accepted.warning = 'payload differs from the original request';
      return { status: 200, body: accepted };
    }
    releaseKey = reservation.release;
  }

  try {
    await deps.secrets.put(jobId, { apiKey: tenant.apiKey, body: payload, files });
    await deps.records.jobs.insertOne({
      _id: jobId, tenant: tenant.hash, opcoId, type: kind.type, status: 'pending', retries: 0,
      createdAt: new Date(), startedAt: null, completedAt: null, steps: planSteps(kind.type, Object.keys(files)),
      leaseOwner: null, leaseUntil: null,
    });
    await deps.queue.publish(JOBS_QUEUE, { jobId }, { priority: PRIORITY.client });
  } catch (err) {
    await Promise.allSettled([deps.records.jobs.deleteOne({ _id: jobId }), deps.secrets.purge(jobId), releaseKey()]);
    throw createError('UNAVAILABLE', 'the job could not be queued; nothing was accepted, retry later', { cause: err });
  }
  return { status: 202, body: { jobId, status: 'pending', statusUrl } };
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

async function unavailableOnFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isServiceError(err)) throw err;
    throw createError('UNAVAILABLE', 'the store is unreachable; nothing was accepted', { cause: err });
  }
}
