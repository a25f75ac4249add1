/**
 * OAuth 2.0 client-credentials token endpoint (RFC 6749 4.4) and bearer check of the other
 * routes. Any client is accepted so that demos need no setup; `wrong-secret` is the one way to
 * exercise the proxy's handling of a refused credential.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mediaType, sendJson } from './exchange.js';

export const REFUSED_CLIENT_SECRET = 'wrong-secret';

export class TokenIssuer {
  private readonly tokens = new Map<string, number>();

  constructor(private lifetimeS: number) {}

  setLifetime(seconds: number): void {
    this.lifetimeS = seconds;
  }

  get lifetime(): number {
    return this.lifetimeS;
  }

  issue(): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, Date.now() + this.lifetimeS * 1000);
    return token;
  }

  valid(token: string): boolean {
    const expiresAt = this.tokens.get(token);
    if (expiresAt === undefined) return false;
    if (Date.now() >= expiresAt) {
      this.tokens.delete(token);
      return false;
    }
    return true;
  }

  revokeAll(): void {
    this.tokens.clear();
  }

  /** True when the request carries `Authorization: Bearer <valid token>`. */
  authorizes(req: IncomingMessage): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return match !== null && this.valid(match[1]!);
  }
}

interface ClientCredentials {
  grantType?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
}

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64. */
function decodeBasicPart(part: string): string {
  return decodeURIComponent(part.replace(/\+/g, ' '));
}

function credentials(req: IncomingMessage, body: Buffer): ClientCredentials {
  const form = new URLSearchParams(mediaType(req) === 'application/x-www-form-urlencoded' ? body.toString('utf8') : '');
  const found: ClientCredentials = {
    grantType: form.get('grant_type') ?? undefined,
    clientId: form.get('client_id') ?? undefined,
    clientSecret: form.get('client_secret') ?? undefined,
    scope: form.get('scope') ?? undefined,
  };
  const basic = /^Basic\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      try {
        found.clientId = decodeBasicPart(decoded.slice(0, colon));
        found.clientSecret = decodeBasicPart(decoded.slice(colon + 1));
      } catch {
        // Malformed percent-encoding: leave the credentials unset, which answers invalid_client.
      }
    }
  }
  return found;
}

export function handleTokenRequest(req: IncomingMessage, res: ServerResponse, body: Buffer, issuer: TokenIssuer): void {
  // Token answers must never be cached by an intermediary (RFC 6749 5.1).
  const headers = { 'cache-control': 'no-store', pragma: 'no-cache' };
  if (req.method !== 'POST') {
    sendJson(res, 405, { error: 'invalid_request', error_description: 'POST required' }, { ...headers, allow: 'POST' });
    return;
  }
  const { grantType, clientId, clientSecret, scope } = credentials(req, body);
  if (!grantType) {
    sendJson(res, 400, { error: 'invalid_request', error_description: 'grant_type is required' }, headers);
    return;
  }
  if (grantType !== 'client_credentials') {
    sendJson(res, 400, { error: 'unsupported_grant_type' }, headers);
    return;
  }
  if (!clientId || !clientSecret || clientSecret === REFUSED_CLIENT_SECRET) {
    sendJson(res, 401, { error: 'invalid_client' }, { ...headers, 'www-authenticate': 'Basic realm="sandbox"' });
    return;
  }
  sendJson(res, 200, {
    access_token: issuer.issue(),
    token_type: 'Bearer',
    expires_in: issuer.lifetime,
    ...(scope ? { scope } : {}),
  }, headers);
}
