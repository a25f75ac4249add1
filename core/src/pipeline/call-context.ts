/** What one upstream call carries through the pipeline of SPEC 1.1. */
import type { Profile, RouteKey, RouteProfile } from '../profile/profile.js';
import type { ServiceError } from '../errors/errors.js';

/** SPEC 5.3: a tenant is the SHA-256 hash of its X-API-KEY; the key itself is only forwarded. */
export interface Tenant {
  hash: string;
  apiKey: string;
  /**
   * Set by the edge when the upstream has not accepted the key yet: the client address (its key,
   * http/address-limits.ts) whose bounds what this request stores counts against (held-work.ts).
   */
  unprovenFrom?: string;
}

/**
 * An opcoId of the config resolved against its adapter's profile. It holds no secret: the
 * upstream credentials stay with the upstream client (upstream-auth/).
 */
export interface Opco {
  id: string;
  adapter: string;
  profile: Profile;
  baseUrl: string;
  rateLimit: { limit: number; windowMs: number };
  pollingIntervalMs: number;
}

/** SPEC 8 priorities: lower runs first. */
export const PRIORITY = { client: 1, normal: 5, low: 10 } as const;

export interface UpstreamAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export interface CachedAnswer {
  /**
   * The answer's JSON as kept, written to an HTTP client as is: its UTF-8 bytes (what an
   * in-process cache should keep: no encoding per hit, and memory outside V8's heap, given back
   * as soon as an evicted answer is collected), or its text.
   */
  json: Buffer | string;
  /** Which layer answered (`memory`, `store`), for metrics. */
  source: string;
}

/** A file's bytes: one buffer, or the pieces it was decrypted in (never joined, to spare a copy). */
export type FileContent = Buffer | readonly Buffer[];

export interface CallContext {
  opco: Opco;
  route: RouteKey;
  routeProfile: RouteProfile;
  method: 'GET' | 'POST';
  tenant: Tenant;
  /** Query of a GET, after validation (and, past step 5, after the profile's transforms). */
  query: Record<string, string>;
  /** Body of a POST (past step 5, transformed). */
  body?: unknown;
  /** Decoded `_files` of a POST, by role. */
  files?: Record<string, FileContent>;
  priority: number;
  /** A client waits on the HTTP connection for this call's answer (step 4 may bound its wait). */
  synchronous: boolean;
  /** Headers of the admission lease of the current attempt (`Svc-Hub-Token`). */
  leaseHeaders?: Record<string, string>;
  /** Extra headers set by beforeCall hooks; sent last, so they may override any other. */
  upstreamHeaders: Record<string, string>;
  response?: UpstreamAnswer;
  error?: ServiceError;
  /** Drift found at step 8 (D14): kept with metrics and logged, never shown to clients. */
  warnings: string[];
  startedAt: number;
  /** Set by whoever answered at step 3. */
  cache: 'hit' | 'miss' | 'none';
  /** The answer's JSON, when a step already serialised it (the cache's store): not done twice. */
  answerJson?: Buffer | string;
  /** Skip the cache lookup (step 3): the caller needs the upstream's answer of now. */
  fresh?: boolean;
  /** Background work stops waiting for budget once this answers true (a cancelled sync). */
  cancelled?: () => boolean | Promise<boolean>;
  /** Background work its worker can hand back to the queue (a job step): see AdmissionRequest.deferrable. */
  deferrable?: boolean;
  /** Request id of the HTTP request or job the call serves (logs). */
  requestId?: string;
  /** The caller's W3C trace context, for tracing plugins (the otel plugin makes it the parent). */
  traceparent?: string;
}
