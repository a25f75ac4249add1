/**
 * Declarative upstream profiles (SPEC 1 rule 5, 4.16): an adapter package exports one. Data
 * first: routes, transforms at declared paths, cache lifetimes, limits, the authentication
 * scheme and the meaning of the upstream's error answers. Code only where data cannot say it.
 */
import { profileRoutes, type ProfileRoute } from '@opco-proxy/schemas';
import type { AuthStrategy } from '../upstream-auth/auth-strategy.js';
import type { ErrorCode } from '../errors/errors.js';
import { kernelError } from '../errors/kernel-errors.js';

/** The service routes a profile can support; a route absent from `routes` answers 501. */
export const ROUTE_KEYS = profileRoutes;
export type RouteKey = ProfileRoute;

/** A named, pure transform of a JSON value (request body/query or response body). */
export interface Transform {
  readonly name: string;
  apply(value: unknown): unknown;
  /**
   * `apply` without its copy, for a value the caller owns and shares with nothing (the pipeline's
   * freshly parsed answer, or the output of the transform before): it may rewrite it in place.
   * Optional: without it, `apply` is used.
   */
  rewrite?(owned: unknown): unknown;
  /** The dotted paths it acts on, when it acts on declared paths: the adapter kit checks each exists. */
  readonly paths?: readonly string[];
  /**
   * True when it changes field names or the shape of the value (rename, renameKeys, pageFrom,
   * wrapBareArray): paths declared after it in a request list speak the upstream's names, and
   * paths declared before it in a response list speak the upstream's names too.
   */
  readonly reshapes?: boolean;
}

export interface RouteProfile {
  /** Upstream path appended to the opco's `baseUrl`. */
  upstream: string;
  /** Cache lifetime in seconds; 0 or absent means not cached. GET only. */
  cacheTtlS?: number;
  /** Applied in order to the query (GET) or body (POST) before the call (pipeline step 5). */
  request?: Transform[];
  /** Applied in order to the upstream answer (pipeline step 7). */
  response?: Transform[];
  /** POST only: send multipart/form-data with the JSON metadata in a part of this name. */
  multipart?: string;
}

/**
 * What an upstream error answer means, when the upstream does not say it the standard way: an
 * upstream that answers 400 "Dossier inconnu" for a dossier it does not have means 404 NOT_FOUND.
 * The first rule that matches wins; without a match the status decides (SPEC 7).
 */
export interface UpstreamErrorRule {
  status: number;
  /** Tested against the upstream answer's text; absent matches any answer of that status. */
  body?: RegExp;
  /** Routes it applies to; absent means every route. */
  routes?: RouteKey[];
  code: Extract<ErrorCode, 'NOT_FOUND' | 'VALIDATION_ERROR' | 'HTTP_ERROR' | 'UPSTREAM_ERROR' | 'RATE_LIMITED'>;
  /** The answer's description (default: the code's). */
  description?: string;
}

/**
 * How the upstream says "this X-API-KEY is not one I know" (issue 37, docs/decisions.md P13): an
 * answer of `status` whose text `body` matches. Such an answer holds the key refused at once; a
 * 403 it does not match refuses that one request (a dossier that is not the CFA's), and holds a
 * key the upstream has accepted refused only after several in a row.
 */
export interface KeyRefusal {
  /** Default 403. */
  status?: number;
  /** Tested against the upstream answer's text. */
  body: RegExp;
}

/** A profile as the service runs it: every key filled (profile-format.ts gives the defaults). */
export interface Profile {
  /** The profile format it is written for (profile-format.ts); absent in a definition means 1. */
  formatVersion: number;
  id: string;
  /** Versions of the upstream API, reported by GET /{opcoId}/status when the upstream does not. */
  versions: string[];
  rateLimit: { limit: number; windowMs: number };
  sync: { batchSize: number };
  polling: { intervalMs: number };
  /** How the service authenticates to this upstream (default: OAuth client credentials, form). */
  auth?: AuthStrategy;
  errors?: UpstreamErrorRule[];
  /** How the upstream says a CFA key is unknown; absent, no answer alone confirms it (P13). */
  keyRefusal?: KeyRefusal;
  routes: Partial<Record<RouteKey, RouteProfile>>;
}

/** A profile as an adapter writes it: the keys with a default (profile-format.ts) may be left out. */
export type ProfileDefinition = Omit<Profile, 'formatVersion' | 'sync' | 'polling'> & {
  formatVersion?: number;
  sync?: Partial<Profile['sync']>;
  polling?: Partial<Profile['polling']>;
};

/** Types a profile and refuses an unknown route at once; the rest is checked when the service loads it. */
export function defineProfile(profile: ProfileDefinition): ProfileDefinition {
  for (const key of Object.keys(profile.routes)) {
    if (!(ROUTE_KEYS as readonly string[]).includes(key)) {
      throw kernelError('OPCO_ERR_PROFILE_ROUTE_UNKNOWN', { profile: profile.id, route: key });
    }
  }
  return profile;
}

/** What an adapter package exports as default. */
export interface AdapterModule {
  profile: ProfileDefinition;
}
