/**
 * What a failed step does next (SPEC 3.1, 8, D5): retryable errors (429, timeout, 5xx,
 * network) are tried again as the job's RetryPolicy says (config `attempts`, `backoffMs`: by
 * default 1 s, 2 s up to 3 attempts);
 * 400/403/404/422 and unusable answers fail at once (the error table's `workerRetry` says which).
 * A refusal for lack of budget is not an attempt: the job simply waits.
 */
import { isRetriedByWorkers, type ServiceError } from '@opco-proxy/core';
import { type RetryPolicy } from '@opco-proxy/core/durable';

export type NextMove = { kind: 'retry'; delayMs: number } | { kind: 'wait'; delayMs: number } | { kind: 'fail' };

export function nextMove(error: ServiceError, attemptsMade: number, policy: RetryPolicy): NextMove {
  if (error.code === 'RATE_LIMITED') return { kind: 'wait', delayMs: retryAfterMs(error) };
  if (!isRetriedByWorkers(error)) return { kind: 'fail' };
  const delayMs = policy.nextDelay(attemptsMade);
  return delayMs === null ? { kind: 'fail' } : { kind: 'retry', delayMs };
}

/** Whether the upstream may have acted on a call that ended with this error. */
export function mayHaveReachedUpstream(error: ServiceError): boolean {
  return error.code === 'TIMEOUT' || error.code === 'NETWORK_ERROR';
}

function retryAfterMs(error: ServiceError): number {
  const seconds = Number(error.headers['Retry-After']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
}
