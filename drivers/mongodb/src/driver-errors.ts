/** How the driver (and FerretDB through it) says "duplicate key" and "server unreachable". */

export function isDuplicateKey(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === 11000 || code === 11001) return true;
  // FerretDB v1 reports a unique violation by an update as a generic error (code 1) carrying
  // its backend's own message (SQLite's, or PostgreSQL's SQLSTATE 23505); only inserts get E11000.
  return code === 1 && typeof message === 'string' && (message.includes('UNIQUE constraint failed') || message.includes('(SQLSTATE 23505)'));
}

/** Driver errors that mean "the server cannot be reached or is not serving now". */
const UNAVAILABLE_ERRORS = new Set([
  'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongoTopologyClosedError',
  'MongoNotConnectedError', 'MongoPoolClearedError', 'PoolClearedError', 'PoolClosedError', 'MongoWaitQueueTimeoutError',
]);

/** Socket errors the driver sometimes lets through unwrapped (a write after the server hung up). */
const SOCKET_ERRORS = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH']);

export function isServerUnavailable(err: unknown): boolean {
  const { name, errorLabels, code } = (err ?? {}) as { name?: string; errorLabels?: unknown; code?: unknown };
  if (name && UNAVAILABLE_ERRORS.has(name)) return true;
  if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return true;
  return Array.isArray(errorLabels) && (errorLabels.includes('NetworkError') || errorLabels.includes('ResetPool'));
}
