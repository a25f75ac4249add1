/** What one upstream call carries through the pipeline of SPEC 1.1. */
import type { Profile, RouteKey, RouteProfile } from './profile.js';
import type { ServiceError } from './errors.js';

/** SPEC 5.3: a tenant is the SHA-256 hash of its X-API-KEY; the key itself is only forwarded. */
export interface Tenant {
  hash: string;
  apiKey: string;
}

/** An opcoId of the config resolved against its adapter's profile. */
export interface Opco {
  id: string;
  adapter: string;
  profile: Profile;
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
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
  body: unknown;
  /** Which layer answered, for the `X-Cache` header and metrics. */
  source: string;
}

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
  files?: Record<string, Buffer>;
  priority: number;
  /** Extra headers sent upstream, set by beforeCall hooks (e.g. Svc-Hub-Token). */
  upstreamHeaders: Record<string, string>;
  response?: UpstreamAnswer;
  error?: ServiceError;
  /** Drift found at step 8 (D14): kept with metrics and logged, never shown to clients. */
  warnings: string[];
  startedAt: number;
  /** Set by whoever answered at step 3. */
  cache: 'hit' | 'miss' | 'none';
  /** Skip the cache lookup (step 3): the caller needs the upstream's answer of now. */
  fresh?: boolean;
  /** Background work stops waiting for budget once this answers true (a cancelled sync). */
  cancelled?: () => boolean | Promise<boolean>;
  /** Called after the upstream answered, so a budget slot is timed from the call's end. */
  releaseBudget?: () => Promise<void>;
}
