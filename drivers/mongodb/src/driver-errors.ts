/** How the driver (and FerretDB through it) says "duplicate key" and "server unreachable". */

export function isDuplicateKey(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === 11000 || code === 11001) return true;
  // FerretDB v1 reports a unique violation by an update as a generic error (code 1) carrying
  // its backend's own message (SQLite's, or PostgreSQL's SQLSTATE 23505); only inserts get E11000.
  return (
    code === 1 &&
    typeof message === 'string' &&
    (message.includes('UNIQUE constraint failed') || message.includes('(SQLSTATE 23505)'))
  );
}

/** Driver errors that mean "the server cannot be reached or is not serving now". */
const UNAVAILABLE_ERRORS = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoTopologyClosedError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'PoolClearedError',
  'PoolClosedError',
  'MongoWaitQueueTimeoutError',
]);

/**
 * Server error codes that mean the same from a server that did answer: shutting down, stepping
 * down or no longer primary, cut off from its peers (the codes the driver itself retries once;
 * when the retry fails too, they reach the store).
 */
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/**
 * FerretDB answers with a generic InternalError (code 1) when its own backend is out of reach:
 * PostgreSQL refusing connections (down, or out of connection slots: "too many clients"), or a
 * connection dropped mid-query. The message carries the backend's words.
 */
const FERRETDB_BACKEND_DOWN = [
  /failed to connect to `/, // pgx: no connection could be opened
  /\(SQLSTATE (08\d{3}|53300|57P0[1-3])\)/, // connection exception, too many clients, shutting down
  /\bunexpected EOF$/, // the backend's connection closed mid-answer
  /\bconn closed\b/,
];

/** Socket errors the driver sometimes lets through unwrapped (a write after the server hung up). */
const SOCKET_ERRORS = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENOTCONN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function isServerUnavailable(err: unknown): boolean {
  const { name, errorLabels, code, message } = (err ?? {}) as {
    name?: string;
    errorLabels?: unknown;
    code?: unknown;
    message?: unknown;
  };
  if (name && UNAVAILABLE_ERRORS.has(name)) return true;
  if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return true;
  if (typeof code === 'number' && UNAVAILABLE_CODES.has(code)) return true;
  if (code === 1 && typeof message === 'string' && FERRETDB_BACKEND_DOWN.some((pattern) => pattern.test(message)))
    return true;
  return Array.isArray(errorLabels) && (errorLabels.includes('NetworkError') || errorLabels.includes('ResetPool'));
}
