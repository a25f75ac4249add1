/**
 * Upstream authentication (SPEC 5.2, D10): OAuth 2.0 client credentials per opcoId, fetched
 * lazily, refreshed at 80% of its lifetime, one refresh in flight at a time. The token lives
 * in this object's memory only: never logged, stored or returned.
 */
import got from 'got';
import { createError } from './errors.js';
import type { Opco } from './call-context.js';

interface HeldToken {
  accessToken: string;
  refreshAt: number;
  expiresAt: number;
}

export interface TokenManagerOptions {
  timeoutMs: number;
  now?: () => number;
}

export class TokenManager {
  private readonly tokens = new Map<string, HeldToken>();
  private readonly inFlight = new Map<string, Promise<HeldToken>>();
  /** Counts token requests per opco, for operators and tests. */
  readonly fetches = new Map<string, number>();

  constructor(private readonly options: TokenManagerOptions) {}

  async token(opco: Opco): Promise<string> {
    const held = this.tokens.get(opco.id);
    if (held && this.now() < held.refreshAt) return held.accessToken;
    return (await this.refresh(opco)).accessToken;
  }

  /**
   * Called when the upstream answered 401 to `rejected`: drops it unless a newer token already
   * replaced it, so N concurrent 401s cause one refresh, not N.
   */
  invalidate(opco: Opco, rejected: string): void {
    if (this.tokens.get(opco.id)?.accessToken === rejected) this.tokens.delete(opco.id);
  }

  private refresh(opco: Opco): Promise<HeldToken> {
    let pending = this.inFlight.get(opco.id);
    if (!pending) {
      pending = this.fetchToken(opco).finally(() => this.inFlight.delete(opco.id));
      this.inFlight.set(opco.id, pending);
    }
    return pending;
  }

  private async fetchToken(opco: Opco): Promise<HeldToken> {
    this.fetches.set(opco.id, (this.fetches.get(opco.id) ?? 0) + 1);
    const form: Record<string, string> = {
      grant_type: 'client_credentials',
      client_id: opco.clientId,
      client_secret: opco.clientSecret,
    };
    if (opco.scope) form.scope = opco.scope;
    let response;
    try {
      response = await got.post(opco.tokenUrl, {
        form,
        timeout: { request: this.options.timeoutMs },
        retry: { limit: 0 },
        throwHttpErrors: false,
        responseType: 'text',
      });
    } catch (err) {
      const timedOut = (err as { name?: string }).name === 'TimeoutError';
      throw createError(timedOut ? 'TIMEOUT' : 'NETWORK_ERROR', `upstream token endpoint of ${opco.id} unreachable`, { cause: err });
    }
    const body = parseJson(response.body) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (response.statusCode >= 400 || typeof body?.access_token !== 'string') {
      // Not the caller's fault: the service's own upstream credentials were refused.
      throw createError('UPSTREAM_ERROR', `upstream authentication of ${opco.id} failed (token endpoint answered ${response.statusCode})`, {
        status: 502,
        retryable: response.statusCode >= 500,
      });
    }
    const lifetimeS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 300;
    const now = this.now();
    const held = { accessToken: body.access_token, refreshAt: now + lifetimeS * 800, expiresAt: now + lifetimeS * 1000 };
    this.tokens.set(opco.id, held);
    return held;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
