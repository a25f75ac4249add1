/**
 * Pipeline step 4 (SPEC 1.1) as a seam with exactly one provider: the store budget by default
 * (store-budget.ts), the hub when its plugin provides one. The pipeline asks for a lease
 * before each upstream call, sends the lease's headers with the call, and releases the lease with
 * the call's outcome once the call has ended.
 */
import type { AdmissionState } from '@opco-proxy/schemas';
import type { RouteKey } from '../profile/profile.js';

export type { AdmissionState };

export interface AdmissionRequest {
  opcoId: string;
  /** The opco's effective rate limit (profile, overridden by config). */
  rateLimit: { limit: number; windowMs: number };
  route: RouteKey;
  method: 'GET' | 'POST';
  /** SPEC 8: 1 client, 5 default, 10 sync and polling; lower is served first. */
  priority: number;
  /** Hash of the CFA's X-API-KEY: tenants of one priority take turns (D11). */
  tenant: string;
  /**
   * The upstream has accepted this tenant's key lately (tenant-standing.ts). Calls of unproven
   * tenants share at most `unprovenLimit` calls of each window, and never hold a proven
   * tenant's call back: a flood of invented keys takes that slice and no more (issue 27).
   */
  proven: boolean;
  /** Calls per window that unproven tenants may make together: `unprovenSlice(limit, share)`. */
  unprovenLimit: number;
  /**
   * A client is waiting for this call's answer (a GET over HTTP): the provider may make it wait a
   * bounded time, then refuses with 429 RATE_LIMITED. Work of a worker (jobs, sync, polling) is
   * never refused for lack of budget; it waits.
   */
  synchronous: boolean;
  /** Background work stops waiting once this answers true (a cancelled sync). */
  cancelled?: () => boolean | Promise<boolean>;
  /**
   * Background work that can be handed back to its queue (a job step): a provider may refuse it
   * with RATE_LIMITED and Retry-After rather than hold it waiting, so that a step waiting for
   * budget does not hold a worker slot (issue 38). The work is then rescheduled, not failed.
   */
  deferrable?: boolean;
}

export interface UpstreamOutcome {
  /** HTTP status the upstream answered; 0 when no answer came (network failure, timeout). */
  status: number;
  latencyMs: number;
}

export interface AdmissionLease {
  /** Headers sent upstream with the call (`Svc-Hub-Token`). */
  headers: Record<string, string>;
  /** Called once, when the call has ended, whatever its outcome. */
  release(outcome: UpstreamOutcome): Promise<void> | void;
}

export interface AdmissionProvider {
  /** Shown in logs and in the start-up error when two providers are registered. */
  readonly name: string;
  /** Resolves with a lease, or throws a ServiceError (RATE_LIMITED, UNAVAILABLE when cancelled). */
  admit(request: AdmissionRequest): Promise<AdmissionLease>;
  /** How the budget of an opcoId stands, for operators (GET /admin/upstreams, P9); unknown without it. */
  describe?(opco: {
    id: string;
    rateLimit: { limit: number; windowMs: number };
    unprovenLimit: number;
  }): Promise<AdmissionState> | AdmissionState;
}

/** The slice of a window's `limit` that unproven tenants share: `share` of it, at least one call. */
export function unprovenSlice(limit: number, share: number): number {
  return Math.min(limit, Math.max(1, Math.floor(limit * share)));
}
