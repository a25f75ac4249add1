/**
 * OAuth 2.0 client credentials (SPEC 5.2, D10) in the variants OPCO APIs use: the credentials in
 * a form body (RFC 6749 as most do), in HTTP Basic, or in a JSON body; the token and its lifetime
 * under the standard names or others. Fetched lazily, refreshed at 80% of its lifetime, one
 * request in flight at a time (concurrent callers wait for it), dropped and fetched again once
 * when the upstream answers 401 to it. Held in memory only.
 */
import { createError } from '../errors/errors.js';
import { entrySecret, entryString, type AuthSetup, type AuthStrategy, type UpstreamAuth } from './auth-strategy.js';

export interface OAuthOptions {
  /** How the client credentials are sent: form body (default), HTTP Basic, or a JSON body. */
  request?: 'form' | 'basic' | 'json';
  /** Field of the token answer holding the token (default `access_token`). */
  tokenField?: string;
  /** Field of the token answer holding its lifetime in seconds (default `expires_in`). */
  expiresInField?: string;
  /** Lifetime assumed when the answer gives none (default 300 s). */
  defaultLifetimeS?: number;
}

const KIND = 'oauth-client-credentials';
/** D10: refresh once 80% of the lifetime has passed. */
const REFRESH_AT = 0.8;

export function oauthClientCredentials(options: OAuthOptions = {}): AuthStrategy {
  return {
    kind: KIND,
    configKeys: ['tokenUrl', 'clientId', 'clientSecretEnv', 'scope'],
    setup: (setup) => new ClientCredentials(setup, options),
  };
}

interface HeldToken {
  token: string;
  refreshAt: number;
}

class ClientCredentials implements UpstreamAuth {
  private held: HeldToken | undefined;
  private inFlight: Promise<HeldToken> | undefined;
  private readonly tokenUrl: string;
  private readonly clientId: string;
  private readonly clientSecret: string;
  private readonly scope: string | undefined;

  constructor(
    private readonly setup: AuthSetup,
    private readonly options: OAuthOptions,
  ) {
    this.tokenUrl = entryString(setup, 'tokenUrl', KIND)!;
    this.clientId = entryString(setup, 'clientId', KIND)!;
    this.clientSecret = entrySecret(setup, 'clientSecretEnv', KIND);
    this.scope = entryString(setup, 'scope', KIND, true);
  }

  async headers(): Promise<Record<string, string>> {
    const held = this.held && this.setup.clock.now() < this.held.refreshAt ? this.held : await this.refresh();
    return { authorization: `Bearer ${held.token}` };
  }

  /** N concurrent 401s to one token cause one refresh: only the token still held is dropped. */
  refused(used: Record<string, string>): boolean {
    if (this.held && used.authorization === `Bearer ${this.held.token}`) this.held = undefined;
    return true;
  }

  private refresh(): Promise<HeldToken> {
    this.inFlight ??= this.fetchToken().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async fetchToken(): Promise<HeldToken> {
    const { opcoId, clock, timeoutMs } = this.setup;
    let answer: { status: number; text: string };
    try {
      answer = await this.setup.send({ url: this.tokenUrl, ...this.tokenRequest(), timeoutMs });
    } catch (err) {
      const { code, message } = err as { code?: string; message: string };
      if (code === 'TOO_LARGE') throw createError('UPSTREAM_INVALID_RESPONSE', `upstream ${opcoId}: ${message}`);
      const unreachable = `upstream token endpoint of ${opcoId} unreachable`;
      throw createError(code === 'TIMEOUT' ? 'TIMEOUT' : 'NETWORK_ERROR', unreachable, { cause: err });
    }
    const body = parseObject(answer.text);
    const token = body?.[this.options.tokenField ?? 'access_token'];
    if (answer.status >= 400 || typeof token !== 'string' || token === '') {
      // Not the caller's fault: the service's own upstream credentials were refused.
      throw createError(
        'UPSTREAM_ERROR',
        `upstream authentication of ${opcoId} failed (token endpoint answered ${answer.status})`,
        {
          status: 502,
          retryable: answer.status >= 500,
        },
      );
    }
    const expiresIn = Number(body?.[this.options.expiresInField ?? 'expires_in']);
    const lifetimeS = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : (this.options.defaultLifetimeS ?? 300);
    this.held = { token, refreshAt: clock.now() + lifetimeS * 1000 * REFRESH_AT };
    return this.held;
  }

  private tokenRequest(): { headers: Record<string, string>; body: string } {
    const fields: Record<string, string> = { grant_type: 'client_credentials' };
    if (this.scope) fields.scope = this.scope;
    const style = this.options.request ?? 'form';
    if (style === 'json') {
      return {
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ ...fields, client_id: this.clientId, client_secret: this.clientSecret }),
      };
    }
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (style === 'basic') {
      // RFC 6749 2.3.1: each part form-encoded before the Basic encoding.
      const pair = `${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    } else {
      Object.assign(fields, { client_id: this.clientId, client_secret: this.clientSecret });
    }
    return { headers, body: new URLSearchParams(fields).toString() };
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
