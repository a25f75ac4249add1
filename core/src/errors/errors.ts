/**
 * The errors that leave the service. Their one table of codes (SPEC 7 + D5 + P2 + P9) is
 * schemas/src/error-codes.ts, which the OpenAPI document and docs/errors.md read too; it is
 * re-exported here. Every error that leaves the service is a ServiceError rendered by
 * `toErrorBody`, and every failure becomes one through `asServiceError`.
 */
import { ERROR_CODES, errorCodeSpec, type ErrorCode } from '@opco-proxy/schemas';
import { StoreUnavailableError } from '../ports/store.js';
import { QueueUnavailableError } from '../ports/queue.js';

export { ERROR_CODES, errorCodes, errorCodeSpec, type ErrorCode, type ErrorCodeSpec } from '@opco-proxy/schemas';

export interface ErrorDetails {
  status?: number;
  errors?: string[];
  upstream?: unknown;
  retryable?: boolean;
  headers?: Record<string, string>;
  /** Extra top-level fields of the body, e.g. `syncId` of a CONFLICT (D5). */
  extra?: Record<string, unknown>;
  /** The status the upstream answered, when the error is its answer (never shown; call-verdict.ts reads it). */
  upstreamStatus?: number;
  /** The upstream's answer says the CFA's key is unknown (the profile's `keyRefusal`; call-verdict.ts). */
  keyRefused?: boolean;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly errors?: string[];
  readonly upstream?: unknown;
  readonly headers: Record<string, string>;
  readonly extra?: Record<string, unknown>;
  readonly upstreamStatus?: number;
  readonly keyRefused?: boolean;

  constructor(code: ErrorCode, description?: string, details: ErrorDetails = {}) {
    const status = details.status ?? ERROR_CODES[code].status;
    // A refusal (4xx) is an answer, not a fault: nothing reads its stack, and capturing one is
    // most of building the error (4 of 6.5 µs, measured), which a flood of refusals pays per request.
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(description ?? ERROR_CODES[code].description, { cause: details.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.retryable =
      details.retryable ??
      (errorCodeSpec(code).upstreamStatus ? isRetryableStatus(this.status) : ERROR_CODES[code].retryable);
    this.errors = details.errors;
    this.upstream = details.upstream;
    this.headers = details.headers ?? {};
    this.extra = details.extra;
    this.upstreamStatus = details.upstreamStatus;
    if (details.keyRefused) this.keyRefused = true;
  }
}

/** SPEC 7: an upstream error is retryable when its status is 429, 503 or 500 and above. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Whether a background worker (a job step, a sync batch) tries this failure again: the table's
 * `workerRetry` where it says so, else whether the error is retryable.
 */
export function isRetriedByWorkers(error: ServiceError): boolean {
  return error.retryable && (errorCodeSpec(error.code).workerRetry ?? true);
}

export function createError(code: ErrorCode, description?: string, details?: ErrorDetails): ServiceError {
  return new ServiceError(code, description, details);
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** Seconds a client is told to wait when the store or the queue is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * The one mapping of failures onto the table, used by every route and every worker: a
 * ServiceError stays as it is; an unreachable store or queue is 503 UNAVAILABLE with
 * Retry-After (D5: nothing was accepted); anything else is INTERNAL_ERROR, its message kept
 * out of the answer (it may name internals) and in `cause` for the log.
 */
export function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof StoreUnavailableError || err instanceof QueueUnavailableError) {
    const what = err instanceof StoreUnavailableError ? 'the store' : 'the queue';
    return new ServiceError('UNAVAILABLE', `${what} is unreachable; nothing was done, retry later`, {
      cause: err,
      headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) },
    });
  }
  return new ServiceError('INTERNAL_ERROR', undefined, { cause: err });
}

/** Whether a failure is an outage of the store or the queue (retry the same work later). */
export function isUnavailable(err: unknown): boolean {
  return (
    err instanceof StoreUnavailableError ||
    err instanceof QueueUnavailableError ||
    (err instanceof ServiceError && err.code === 'UNAVAILABLE')
  );
}

export interface ErrorBody {
  status: 'error';
  code: ErrorCode;
  description: string;
  errors?: string[];
  upstream?: unknown;
  [extra: string]: unknown;
}

export function toErrorBody(err: ServiceError): ErrorBody {
  const body: ErrorBody = { status: 'error', code: err.code, description: err.message };
  if (err.errors) body.errors = err.errors;
  if (err.upstream !== undefined) body.upstream = err.upstream;
  if (err.extra) Object.assign(body, err.extra, { status: 'error', code: err.code });
  return body;
}
