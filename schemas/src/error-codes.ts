/**
 * The one table of the HTTP error codes (SPEC 7 + D5 + P2 + P9), in the manner of Fastify's
 * lib/errors.js. It lives here, not in core, because both read it: core builds every error from it
 * (core/src/errors/errors.ts re-exports it), the OpenAPI document (openapi.ts) describes each error status
 * from it, and docs/errors.md is generated from it (core/scripts/errors-doc.mjs).
 *
 * - `status`: the HTTP status; `description`: the default message of the body;
 * - `retryable`: whether a caller may try again (SPEC 7; the body's meaning for a synchronous client);
 * - `workerRetry`: whether a background worker (a job step, a sync batch) tries again; when absent,
 *   the same as `retryable`;
 * - `upstreamStatus`: the status and `retryable` are the upstream's answer's (core's
 *   isRetryableStatus); `status` is then only the fallback;
 * - `when`: when the service answers it, in Markdown (the doc's column, the OpenAPI descriptions).
 */
export interface ErrorCodeSpec {
  readonly status: number;
  readonly retryable: boolean;
  readonly workerRetry?: boolean;
  readonly upstreamStatus?: true;
  readonly description: string;
  readonly when: string;
}

export const ERROR_CODES = {
  VALIDATION_ERROR: {
    status: 400,
    retryable: false,
    description: 'Invalid parameters or body',
    when: "invalid query or body; `errors` lists one message per problem (`siren: Must be at least 9 characters`); a request Node's HTTP parser refuses (a malformed header, a bad chunked encoding, an unknown method), with 431 for headers over the size limit and 408 for a request not received in time (`core/src/http/client-errors.ts`)",
  },
  UNAUTHORIZED: {
    status: 401,
    retryable: false,
    description: 'The operator key is missing or wrong',
    when: "an operator route (`/admin/...`, P9) without `Authorization: Bearer <OPCO_PROXY_ADMIN_KEY>` or with a wrong key (a tenant's `X-API-KEY` is not one); `WWW-Authenticate: Bearer`",
  },
  HTTP_ERROR: {
    status: 403,
    retryable: false,
    description: 'X-API-KEY missing or authentication failed',
    when: '`X-API-KEY` missing, malformed (under 8 or over 512 characters, control characters) or not allowed; the upstream refused the key or this one request of it (its body in `upstream`), or refused the key lately, answered here without asking it again for `tenantKeys.refusedTtlS` (P13); an operator route while `OPCO_PROXY_ADMIN_KEY` is not set',
  },
  NOT_FOUND: {
    status: 404,
    retryable: false,
    description: 'Not found',
    when: 'unknown opcoId or route; dossier not found upstream (`upstream` carries its body)',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    retryable: false,
    description: 'Method not allowed on this path; see the Allow header',
    when: 'a method the path does not take (`PUT /webhooks`); `Allow` lists those it takes',
  },
  CONFLICT: {
    status: 409,
    retryable: false,
    description: 'Conflict',
    when: 'a sync already runs for that tenant and opcoId; `syncId` names it',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    retryable: false,
    description: 'Request body too large',
    when: 'body over `limits.bodyBytes`, its JSON outside `_files` over `limits.jsonBytes`, or a decoded `_files` entry over `limits.fileBytes`',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    description: 'The body must be application/json, without an unknown Content-Encoding',
    when: 'a body whose `Content-Type` is not `application/json` (or `+json`), or whose `Content-Encoding` is not gzip, deflate, br or none; `errors` names the header',
  },
  RATE_LIMITED: {
    status: 429,
    retryable: true,
    description: 'Rate limit exceeded',
    when: "upstream budget exhausted (for a key the upstream has not accepted yet: the unproven slice of it, P13), the tenant's own rate exceeded, the client address's limit of unproven keys' upstream reads and failed authentications or of open connections (`server.maxConnectionsPerAddress`), what the unproven keys of that address may keep stored (unfinished jobs, files, webhooks, syncs), or its backoff after wrong operator keys (P13); `Retry-After` in seconds",
  },
  INTERNAL_ERROR: {
    status: 500,
    retryable: false,
    description: 'Unexpected internal error',
    when: 'a bug; logged with its stack, never shown',
  },
  NOT_SUPPORTED: {
    status: 501,
    retryable: false,
    description: 'Route not supported by this upstream body',
    when: "the opco's profile does not offer this route; an HTTP method no route takes, on any path (`TRACE`, `CONNECT`, WebDAV's `PROPFIND`...)",
  },
  NETWORK_ERROR: {
    status: 502,
    retryable: true,
    description: 'Network failure towards upstream',
    when: 'the upstream could not be reached',
  },
  UPSTREAM_INVALID_RESPONSE: {
    // A caller may ask again (a read can come back whole), but a worker does not: the upstream did
    // answer, so a job's write may have been acted on (retrying could do it twice), and a sync batch
    // would get the same unusable page again.
    status: 502,
    retryable: true,
    workerRetry: false,
    description: 'Upstream answer unusable',
    when: 'the upstream answered something unusable (not JSON, not an object, root fields missing)',
  },
  UNAVAILABLE: {
    status: 503,
    retryable: true,
    description: 'Service temporarily unavailable',
    when: "the store (or queue) is unreachable, or the request's audit record could not be written (D32); `GET /ready` while the process stops (P3); `Retry-After` in seconds",
  },
  TIMEOUT: {
    status: 504,
    retryable: true,
    description: 'Upstream did not answer in time',
    when: 'no upstream answer within `upstream.timeoutMs`',
  },
  UPSTREAM_ERROR: {
    status: 502,
    retryable: false,
    upstreamStatus: true,
    description: 'Error returned by the upstream body',
    when: "any other upstream error, with its body in `upstream`; 502 if the service's own upstream credentials are refused",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes of the table, in its order. */
export const errorCodes = Object.keys(ERROR_CODES) as ErrorCode[];

/** The spec of a code, with its optional fields visible to the type checker. */
export function errorCodeSpec(code: ErrorCode): ErrorCodeSpec {
  return ERROR_CODES[code];
}
