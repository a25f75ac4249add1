/**
 * How the simulated upstream authenticates its caller: the `auth` option resolved against the
 * shape's default, and the guard every non-token route passes first.
 */
import type { IncomingMessage } from 'node:http';
import type { TokenIssuer } from './oauth.js';
import type { ApiKeyAuth, ResolvedAuth, SandboxAuth, SandboxShape } from './types.js';

export const DEFAULT_AUTH: Readonly<Record<SandboxShape, ResolvedAuth>> = {
  common: {
    mode: 'oauth',
    request: 'any',
    tokenPath: '/oauth/token',
    answer: { tokenField: 'access_token', typeField: 'token_type', expiresField: 'expires_in' },
  },
  classic: {
    mode: 'oauth',
    request: 'basic',
    tokenPath: '/auth/token',
    answer: { tokenField: 'token', expiresField: 'validity_seconds' },
  },
};

const REQUEST_STYLES = ['form', 'basic', 'json', 'any'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Fills in the shape's defaults and refuses an unusable configuration at start. */
export function resolveAuth(
  shape: SandboxShape,
  auth: SandboxAuth | undefined,
  reservedPaths: readonly string[],
): ResolvedAuth {
  const fallback = DEFAULT_AUTH[shape];
  if (auth === undefined) return structuredClone(fallback);
  if (auth.mode === 'api-key') {
    if (typeof auth.header !== 'string' || !HEADER_NAME.test(auth.header))
      throw new TypeError(`auth.header must be an HTTP header name, got ${String(auth.header)}`);
    if (typeof auth.key !== 'string' || auth.key === '') throw new TypeError('auth.key must be a non-empty string');
    return { mode: 'api-key', header: auth.header, key: auth.key };
  }
  if (auth.mode !== 'oauth' || fallback.mode !== 'oauth')
    throw new TypeError(`auth.mode must be 'oauth' or 'api-key', got ${String((auth as { mode?: unknown }).mode)}`);
  const resolved: ResolvedAuth = {
    mode: 'oauth',
    request: auth.request ?? fallback.request,
    tokenPath: auth.tokenPath ?? fallback.tokenPath,
    answer: structuredClone(auth.answer ?? fallback.answer),
  };
  if (!REQUEST_STYLES.includes(resolved.request))
    throw new TypeError(`auth.request must be one of ${REQUEST_STYLES.join(', ')}`);
  if (!resolved.tokenPath.startsWith('/') || reservedPaths.includes(resolved.tokenPath)) {
    throw new TypeError(`auth.tokenPath must be an absolute path of its own, got ${resolved.tokenPath}`);
  }
  const { tokenField, expiresField, typeField } = resolved.answer;
  const names = [tokenField, expiresField, ...(typeField === undefined ? [] : [typeField])];
  if (names.some((n) => typeof n !== 'string' || n === '') || new Set(names).size !== names.length) {
    throw new TypeError('auth.answer needs distinct non-empty tokenField, expiresField (and typeField when given)');
  }
  return resolved;
}

/** The check of a route's caller, and how a refusal is explained. */
export interface UpstreamGuard {
  authorizes(req: IncomingMessage): boolean;
  /** `bearer`: a 401 carries `WWW-Authenticate: Bearer`; `api-key`: it names the header. */
  scheme: 'bearer' | 'api-key';
  header?: string;
}

export function bearerGuard(issuer: TokenIssuer): UpstreamGuard {
  return { scheme: 'bearer', authorizes: (req) => issuer.authorizes(req) };
}

export function apiKeyGuard(auth: ApiKeyAuth): UpstreamGuard {
  const name = auth.header.toLowerCase();
  return { scheme: 'api-key', header: auth.header, authorizes: (req) => req.headers[name] === auth.key };
}
