/**
 * Declarative upstream profiles (SPEC 1 rule 5, 4.16): an adapter package exports one.
 * Data first; a transform is the only code a profile carries.
 */

/** The service routes a profile can support; a route absent from `routes` answers 501. */
export const ROUTE_KEYS = [
  'GET /status',
  'GET /cfakeyinfo',
  'GET /dossiers',
  'GET /dossiers/etats',
  'GET /dossiers/liste',
  'GET /factures/etats',
  'POST /dossiers',
  'POST /factures',
  'POST /conventions',
  'POST /certificats',
  'POST /documents',
] as const;
export type RouteKey = (typeof ROUTE_KEYS)[number];

/** A named, pure transform of a JSON value (request body/query or response body). */
export interface Transform {
  readonly name: string;
  apply(value: unknown): unknown;
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

export interface Profile {
  id: string;
  /** Versions of the upstream API, reported by GET /{opcoId}/status when the upstream does not. */
  versions: string[];
  rateLimit: { limit: number; windowMs: number };
  sync: { batchSize: number };
  polling: { intervalMs: number };
  routes: Partial<Record<RouteKey, RouteProfile>>;
}

export function defineProfile(profile: Profile): Profile {
  for (const key of Object.keys(profile.routes)) {
    if (!(ROUTE_KEYS as readonly string[]).includes(key)) {
      throw new Error(`profile ${profile.id}: unknown route "${key}"`);
    }
  }
  return profile;
}

/** What an adapter package exports as default. */
export interface AdapterModule {
  profile: Profile;
}
