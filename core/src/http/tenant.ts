/**
 * Client authentication (SPEC 4.0.1, 5.1, 5.3, D8): the X-API-KEY is checked for shape only
 * (the upstream body owns the keys), hashed into the tenant identity, and optionally matched
 * against an operator allow-list of tenant hashes.
 */
import { createError } from '../errors/errors.js';
import { safeEqualText, sha256Hex } from '../crypto/crypto.js';
import type { Tenant } from '../pipeline/call-context.js';

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * Hashes of the keys seen lately: a client sends the same key on every request, and the hash was
 * a measurable share of a cached read's CPU. Bounded: emptied whole when full, so a stream of
 * distinct keys costs at most one hash each, as without it.
 */
const recentHashes = new Map<string, string>();
const RECENT_HASHES_MAX = 1024;

export function tenantHash(apiKey: string): string {
  let hash = recentHashes.get(apiKey);
  if (hash === undefined) {
    hash = sha256Hex(apiKey);
    if (recentHashes.size >= RECENT_HASHES_MAX) recentHashes.clear();
    recentHashes.set(apiKey, hash);
  }
  return hash;
}

export function authenticate(header: string | string[] | undefined, allowList?: ReadonlySet<string>): Tenant {
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (!apiKey) throw createError('HTTP_ERROR', 'X-API-KEY header is required');
  if (apiKey.length < 8 || apiKey.length > 512 || CONTROL_CHARACTERS.test(apiKey)) {
    throw createError('HTTP_ERROR', 'X-API-KEY is malformed');
  }
  const hash = tenantHash(apiKey);
  if (allowList && allowList.size > 0 && !allowList.has(hash)) {
    throw createError('HTTP_ERROR', 'X-API-KEY is not allowed on this service');
  }
  return { hash, apiKey };
}

/** What logs show of a key (SPEC 5.5): enough to tell keys apart, never enough to use one. */
export function maskApiKey(apiKey: string): string {
  return apiKey.length <= 4 ? '****' : `${apiKey.slice(0, 4)}****`;
}

/**
 * Operators (P9): `Authorization: Bearer <OPCO_PROXY_ADMIN_KEY>`, compared in constant time. Without
 * a configured key the operator routes are off, and say so (403); a missing or wrong key, a
 * tenant's X-API-KEY included, is 401 with the scheme to use.
 */
export function authenticateOperator(header: string, adminKey: string | undefined): void {
  if (!adminKey) throw createError('HTTP_ERROR', 'the operator routes are off: set OPCO_PROXY_ADMIN_KEY to use them');
  const token = /^Bearer (.+)$/.exec(header)?.[1];
  if (!token || !safeEqualText(token, adminKey)) {
    throw createError('UNAUTHORIZED', 'Authorization: Bearer <operator key> is required', {
      headers: { 'WWW-Authenticate': 'Bearer realm="opco-proxy operator"' },
    });
  }
}
