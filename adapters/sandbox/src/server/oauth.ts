/**
 * OAuth 2.0 client-credentials token endpoint (RFC 6749 4.4) and bearer check of the other
 * routes. Which request style is accepted and how the answer's fields are named come from the
 * `auth` option (upstream-auth.ts). Any client is accepted so that demos need no setup;
 * `wrong-secret` is the one way to exercise the proxy's handling of a refused credential.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './exchange.js';
import { readTokenRequest } from './token-request.js';
import type { OAuthAuth, TokenRequestRecord } from './types.js';

export const REFUSED_CLIENT_SECRET = 'wrong-secret';

export class TokenIssuer {
  private readonly tokens = new Map<string, number>();

  constructor(
    private lifetimeS: number,
    private readonly clock: { now(): number } = Date,
  ) {}

  setLifetime(seconds: number): void {
    this.lifetimeS = seconds;
  }

  get lifetime(): number {
    return this.lifetimeS;
  }

  issue(): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.clock.now() + this.lifetimeS * 1000);
    return token;
  }

  valid(token: string): boolean {
    const expiresAt = this.tokens.get(token);
    if (expiresAt === undefined) return false;
    if (this.clock.now() >= expiresAt) {
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
    return match !== null && this.valid(match[1]);
  }
}

const STYLE_WORDING: Record<string, string> = {
  form: 'client_id and client_secret in an application/x-www-form-urlencoded body',
  basic: 'HTTP Basic client authentication with grant_type in an application/x-www-form-urlencoded body',
  json: 'a JSON body {grant_type, client_id, client_secret}',
};

/**
 * Answers one token request as `auth` says, and notes on `log` how it was made. The request
 * style is checked first, so a well-formed request in the wrong style is still a 400.
 */
export function handleTokenRequest(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  issuer: TokenIssuer,
  auth: Required<OAuthAuth>,
  log: TokenRequestRecord,
): void {
  // Token answers must never be cached by an intermediary (RFC 6749 5.1).
  const headers = { 'cache-control': 'no-store', pragma: 'no-cache' };
  if (req.method !== 'POST') {
    sendJson(res, 405, { error: 'invalid_request', error_description: 'POST required' }, { ...headers, allow: 'POST' });
    return;
  }
  const { style, grantType, clientId, clientSecret, scope } = readTokenRequest(req, body);
  log.style = style;
  if (clientId !== undefined) log.clientId = clientId;
  if (auth.request !== 'any' && style !== auth.request) {
    sendJson(
      res,
      400,
      {
        error: 'invalid_request',
        error_description: `client credentials must be sent with ${STYLE_WORDING[auth.request]}`,
      },
      headers,
    );
    return;
  }
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
  const { tokenField, typeField, expiresField } = auth.answer;
  sendJson(
    res,
    200,
    {
      [tokenField]: issuer.issue(),
      ...(typeField === undefined ? {} : { [typeField]: 'Bearer' }),
      [expiresField]: issuer.lifetime,
      ...(scope ? { scope } : {}),
    },
    headers,
  );
}
