/**
 * What a failed step does next (SPEC 3.1, 8, D5): retryable errors (429, timeout, 5xx,
 * network) are tried again after 1 s, 2 s, 4 s up to 3 attempts; 400/403/404/422 and unusable
 * answers (the upstream may have acted) fail at once. An exhausted local budget is not an
 * attempt: the job simply waits for the next free slot.
 */
import type { ServiceError } from '@opco-proxy/core';

export const MAX_ATTEMPTS = 3;

export type NextMove = { kind: 'retry'; delayMs: number } | { kind: 'wait'; delayMs: number } | { kind: 'fail' };

export function nextMove(error: ServiceError, attemptsMade: number, backoffMs: number[]): NextMove {
  if (error.code === 'RATE_LIMITED') return { kind: 'wait', delayMs: retryAfterMs(error) };
  if (error.code === 'UPSTREAM_INVALID_RESPONSE' || !error.retryable) return { kind: 'fail' };
  if (attemptsMade >= MAX_ATTEMPTS) return { kind: 'fail' };
  const delayMs = backoffMs[Math.min(attemptsMade - 1, backoffMs.length - 1)] ?? 1000;
  return { kind: 'retry', delayMs };
}

/** Whether the upstream may have acted on a call that ended with this error. */
export function mayHaveReachedUpstream(error: ServiceError): boolean {
  return error.code === 'TIMEOUT' || error.code === 'NETWORK_ERROR';
}

function retryAfterMs(error: ServiceError): number {
  const seconds = Number(error.headers['Retry-After']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
}
