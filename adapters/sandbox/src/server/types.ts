/**
 * Public contract of the sandbox upstream: a simulated OPCO API served over real HTTP so the
 * proxy's whole pipeline (OAuth, headers, multipart, retries, quirk corrections) runs against it.
 */
import type { Dataset } from './dataset.js';

export interface SandboxQuirks {
  /** Write the upstream's misspelled states (`RUTPURE`, `En cours`, `Valide`, `Refuse`). */
  stateTypos: boolean;
  /** Answer `dossiers/etats` without `numeroPage` with a bare array instead of a page object. */
  bareArrays: boolean;
}

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
  /** `expires_in` of issued tokens, in seconds. Default 3600. */
  tokenLifetimeS?: number;
  /** Both default to true, like the real upstream. */
  quirks?: Partial<SandboxQuirks>;
  /** Moves this many dossiers and invoices to a new state every `everyMs` (demo of pollers). Off by default. */
  advanceEvery?: { everyMs: number; dossiers?: number; factures?: number };
}

export interface Fault {
  /** `"METHOD /path"` prefix, e.g. `"GET /v2/dossiers/etats"`. Absent: any route but the token route. */
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
}

export interface SandboxStats {
  tokenRequests: number;
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
  tokenUrl: string;
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
