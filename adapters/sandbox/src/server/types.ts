/**
 * Public contract of the sandbox upstream: a simulated OPCO API served over real HTTP so the
 * proxy's whole pipeline (OAuth, headers, multipart, retries, quirk corrections) runs against it.
 */
import type { Clock } from '@opco-proxy/core';
import type { Dataset } from './dataset.js';

export interface SandboxQuirks {
  /** Write the upstream's misspelled states (`RUTPURE`, `En cours`, `Valide`, `Refuse`). */
  stateTypos: boolean;
  /** Answer `dossiers/etats` without `numeroPage` with a bare array instead of a page object. */
  bareArrays: boolean;
}

/** Which upstream API family the sandbox plays (README: "The classic shape"). */
export type SandboxShape = 'common' | 'classic';

/** Where a token request carries the client credentials. */
export type TokenRequestStyle = 'form' | 'basic' | 'json';

/** Names of the token answer's fields. */
export interface TokenAnswerFields {
  tokenField: string;
  expiresField: string;
  /** Absent: the answer has no token-type field. */
  typeField?: string;
}

/** Client-credentials token endpoint, then `Authorization: Bearer` on every route. */
export interface OAuthAuth {
  mode: 'oauth';
  /** Accepted request style; another style is 400 `invalid_request`. `any` takes all three. */
  request?: TokenRequestStyle | 'any';
  /** Path of the token endpoint. */
  tokenPath?: string;
  /** Field names of the answer; replaces the shape's default answer as a whole. */
  answer?: TokenAnswerFields;
}

/** No token endpoint: every route needs this static header with this value (401 otherwise). */
export interface ApiKeyAuth {
  mode: 'api-key';
  header: string;
  key: string;
}

export type SandboxAuth = OAuthAuth | ApiKeyAuth;

/** The auth the sandbox runs with, every field filled in from the shape's default. */
export type ResolvedAuth = Required<OAuthAuth> | ApiKeyAuth;

export interface SandboxOptions {
  /** Port to listen on; 0 (default) takes a free one. Host is always 127.0.0.1. */
  port?: number;
  /** Seed of the generated data; the same seed always gives the same dataset. Default 42. */
  seed?: number;
  /** Default 300, spread over the years 2019..2025. */
  dossierCount?: number;
  /** Default 120. */
  factureCount?: number;
  /** Page size of the etats routes. Default 100. */
  pageSize?: number;
  /** Lifetime of issued tokens in seconds, sent as `expires_in` (or the answer's `expiresField`). Default 3600. */
  tokenLifetimeS?: number;
  /**
   * The sandbox's time: issued tokens' lifetimes, the `advanceEvery` timer, latency faults and the
   * arrival times it records run on it (a test's TestClock, moved instead of waited for). Default:
   * the system clock.
   */
  clock?: Pick<Clock, 'now' | 'setTimeout'>;
  /** Both default to true, like the real upstream. */
  quirks?: Partial<SandboxQuirks>;
  /** Moves this many dossiers and invoices to a new state every `everyMs` (demo of pollers). Off by default. */
  advanceEvery?: { everyMs: number; dossiers?: number; factures?: number };
  /** Upstream API family. Default `common` (SPEC 4.16). */
  shape?: SandboxShape;
  /**
   * Upstream authentication. Default: the shape's (common: OAuth at `/oauth/token`, any style,
   * `{access_token, token_type, expires_in}`; classic: see README). For `oauth`, the fields
   * given override the shape's default ones.
   */
  auth?: SandboxAuth;
  /** 64 hex characters: verify each request's `Svc-Hub-Token` with this HS256 secret and record the outcome. */
  hubSecret?: string;
  /**
   * The CFA keys (`X-API-KEY`) this upstream knows; any other is refused with 403, as a real
   * OPCO refuses a key it never issued. Default: every key but `forbidden-key-000`.
   */
  acceptedKeys?: readonly string[];
}

export interface Fault {
  /**
   * `"METHOD /path"` prefix, e.g. `"GET /v2/dossiers/etats"`; ending in `$`, that route exactly
   * (`"GET /api/v3/dossiers$"`). Absent: any route but the token route.
   */
  route?: string;
  /** Number of matching requests it applies to. Default Infinity. */
  times?: number;
  /** Answer this status with `body` (default `{status:'error', message:'injected'}`). */
  status?: number;
  body?: unknown;
  /** Added to the answer, whatever it is (e.g. `{'retry-after': '1'}`). */
  headers?: Record<string, string>;
  /** Delay before answering (normally, or with the other fault effects). */
  latencyMs?: number;
  /** Never answer; the socket is only released by `close()` or by the client giving up. */
  hang?: boolean;
  /** 200 with an HTML body. */
  garbage?: boolean;
  /** 200 with the JSON literal `null`. */
  nullBody?: boolean;
  /** Destroy the socket without answering (a network error on the client side). */
  destroy?: boolean;
}

export interface FaultControl {
  add(fault: Fault): void;
  clear(): void;
}

export interface ReceivedPart {
  name: string;
  filename?: string;
  contentType?: string;
  content: Buffer;
}

export interface ReceivedRequest {
  /** Arrival time in ms since the epoch, for counting calls per rolling window. */
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body when it was JSON. */
  json?: unknown;
  /** Parts of a multipart body, in arrival order. */
  parts?: ReceivedPart[];
  /** Outcome of the `Svc-Hub-Token` check; only when the sandbox was given a `hubSecret`. */
  hubToken?: HubTokenCheck;
}

/** Claims of a hub grant (SPEC 5.8, DECISIONS D26). */
export interface HubGrantClaims {
  opcoId: string;
  method: string;
  route: string;
  instanceId: string;
  iat: number;
  exp: number;
  iss: string;
  jti: string;
}

export type HubTokenFailure =
  'missing' | 'DISCONNECTED' | 'malformed' | 'signature' | 'expired' | 'claims' | 'method' | 'replayed';

export interface HubTokenCheck {
  valid: boolean;
  /** The token's claims whenever its signature checked out (also when another check failed). */
  claims?: HubGrantClaims;
  reason?: HubTokenFailure;
}

/** One request to the token endpoint. */
export interface TokenRequestRecord {
  at: number;
  /** `basic` when an `Authorization: Basic` header is present, else by body type; `none` for neither. */
  style: TokenRequestStyle | 'none';
  /** Token requests being handled when this one arrived, itself included: 1 means it overlapped none. */
  concurrent: number;
  clientId?: string;
  /** Status answered; absent while pending, or when a fault hung or destroyed the request. */
  status?: number;
}

export interface SandboxStats {
  tokenRequests: number;
  /** Every token request, in arrival order (how it was made, how it was answered). */
  tokenRequestsLog: TokenRequestRecord[];
  /** Requests per `"METHOD /path"`, token route excluded. */
  calls: Record<string, number>;
}

export interface AdvanceResult {
  dossiers: string[];
  factures: string[];
}

export interface Sandbox {
  /** Upstream base URL, no trailing slash. */
  url: string;
  /** URL of the token endpoint; `''` in `api-key` mode, which has none. */
  tokenUrl: string;
  shape: SandboxShape;
  auth: ResolvedAuth;
  /** Stops listening and cuts every open connection, hanging ones included. */
  close(): Promise<void>;
  /** Mutable at run time; read on every request. */
  quirks: SandboxQuirks;
  setTokenLifetime(seconds: number): void;
  /** Invalidates every token issued so far. */
  revokeTokens(): void;
  faults: FaultControl;
  /** Every request except the token route, in arrival order. */
  received: ReceivedRequest[];
  stats: SandboxStats;
  resetStats(): void;
  dataset: Dataset;
  /**
   * Moves that many dossiers / invoices to another state with today's dateModification.
   * Returns their numeroInterne / numeroInterneFacture.
   */
  advance(options?: { dossiers?: number; factures?: number }): AdvanceResult;
}
