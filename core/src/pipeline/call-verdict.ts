/**
 * How the outcome of one upstream call counts (D13, issue 27): an answer that says the client
 * asked for something that does not exist or sent something invalid, or that the CFA's key is
 * not one the upstream knows, is the upstream working. Only its own failures (unreachable, timed
 * out, 5xx, an unusable answer, the service's own credentials refused) count as errors, for the
 * `/status` verdict, the 60-second window and the hub's adaptive limit alike.
 */
import type { ServiceError } from '../errors/errors.js';

export type CallVerdict =
  /** A 2xx answer. */
  | 'answered'
  /** A 4xx about the request itself: not found, invalid input, a conflict. */
  | 'client-fault'
  /**
   * The upstream said the CFA's X-API-KEY is not one it knows: an answer the profile's
   * `keyRefusal` recognises (D8, issue 37). A 401 that outlives a fresh token (D10) is answered
   * 403 too, but it speaks of the service's own credentials: a failure.
   */
  | 'key-refused'
  /**
   * A 403 that does not say the key is unknown: the upstream may refuse one request (a dossier
   * that is not the CFA's) to a key it accepts. The key is refused only when it was never
   * accepted, or after several such answers in a row (tenant-standing.ts).
   */
  | 'forbidden'
  /** The upstream's own rate limit (429). */
  | 'rate-limited'
  /** Unreachable, timed out, 5xx, an unusable answer, the service's credentials refused. */
  | 'failure';

export function callVerdict(error: ServiceError | undefined): CallVerdict {
  if (!error) return 'answered';
  switch (error.code) {
    case 'HTTP_ERROR':
      if (error.upstreamStatus === 401) return 'failure';
      return error.keyRefused ? 'key-refused' : 'forbidden';
    case 'NOT_FOUND':
    case 'VALIDATION_ERROR':
    case 'CONFLICT':
      return 'client-fault';
    case 'RATE_LIMITED':
      return 'rate-limited';
    case 'UPSTREAM_ERROR':
      if (error.status === 429) return 'rate-limited';
      // A 401/403 a profile rule kept as the upstream's own error speaks of the service's
      // credentials, not the CFA's key: a failure, and no proof of the key either.
      if (error.status === 401 || error.status === 403) return 'failure';
      return error.status >= 400 && error.status < 500 ? 'client-fault' : 'failure';
    default:
      return 'failure';
  }
}

/** Whether the answer shows the upstream took the CFA's key (the tenant is then proven). */
export function keyAccepted(verdict: CallVerdict): boolean {
  return verdict === 'answered' || verdict === 'client-fault';
}
