/**
 * Checking the hub grant the proxy sends upstream in `Svc-Hub-Token` (SPEC 1.1 and 5.8,
 * DECISIONS D26/D29/D30): an HS256 JWT signed with the hub's secret, claims opcoId, method,
 * route, instanceId, iat, exp = iat + 30, iss and jti. The sandbox only records the outcome on
 * `received`; it never refuses a request for it.
 *
 * The secret is 64 hex characters; the HMAC key is the 32 bytes they encode (as with the
 * service's encryption master key), not the 64 characters themselves.
 */
import { errors, jwtVerify } from 'jose';
import type { HubGrantClaims, HubTokenCheck } from './types.js';

export const HUB_TOKEN_HEADER = 'svc-hub-token';
export const HUB_DISCONNECTED = 'DISCONNECTED';
export const HUB_GRANT_LIFETIME_S = 30;
/** Remembered grant ids are pruned once there are this many, the expired ones first. */
const MAX_REMEMBERED = 10_000;

const STRING_CLAIMS = ['opcoId', 'method', 'route', 'instanceId', 'iss', 'jti'] as const;

export function parseHubSecret(secret: string): Uint8Array {
  if (typeof secret !== 'string' || !/^[0-9a-fA-F]{64}$/.test(secret)) {
    throw new RangeError('hubSecret must be 64 hex characters (32 bytes)');
  }
  return Buffer.from(secret, 'hex');
}

function wellFormed(payload: Record<string, unknown>): boolean {
  return (
    STRING_CLAIMS.every((name) => typeof payload[name] === 'string' && payload[name] !== '') &&
    Number.isInteger(payload['iat']) &&
    Number.isInteger(payload['exp']) &&
    payload['exp'] === (payload['iat'] as number) + HUB_GRANT_LIFETIME_S
  );
}

export class HubTokenVerifier {
  private readonly key: Uint8Array;
  /** jti → exp of every grant seen with a good signature, to spot one used twice. */
  private readonly seen = new Map<string, number>();

  constructor(secret: string) {
    this.key = parseHubSecret(secret);
  }

  async check(header: string | string[] | undefined, method: string): Promise<HubTokenCheck> {
    if (header === undefined || header === '') return { valid: false, reason: 'missing' };
    if (Array.isArray(header)) return { valid: false, reason: 'malformed' };
    if (header === HUB_DISCONNECTED) return { valid: false, reason: 'DISCONNECTED' };
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(header, this.key, { algorithms: ['HS256'] }));
    } catch (error) {
      if (error instanceof errors.JWTExpired)
        return { valid: false, reason: 'expired', claims: error.payload as unknown as HubGrantClaims };
      if (error instanceof errors.JWTClaimValidationFailed)
        return { valid: false, reason: 'claims', claims: error.payload as unknown as HubGrantClaims };
      if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) {
        return { valid: false, reason: 'signature' };
      }
      return { valid: false, reason: 'malformed' };
    }
    const claims = payload as unknown as HubGrantClaims;
    if (!wellFormed(payload)) return { valid: false, reason: 'claims', claims };
    if (claims.method.toUpperCase() !== method.toUpperCase()) return { valid: false, reason: 'method', claims };
    if (this.seen.has(claims.jti)) return { valid: false, reason: 'replayed', claims };
    this.remember(claims.jti, claims.exp);
    return { valid: true, claims };
  }

  private remember(jti: string, exp: number): void {
    if (this.seen.size >= MAX_REMEMBERED) {
      const now = Date.now() / 1000;
      for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
      // Still full of live grants: forget the oldest half rather than grow without bound.
      if (this.seen.size >= MAX_REMEMBERED)
        [...this.seen.keys()].slice(0, MAX_REMEMBERED / 2).forEach((id) => this.seen.delete(id));
    }
    this.seen.set(jti, exp);
  }
}
