/**
 * The grant a call carries upstream as `Svc-Hub-Token` (SPEC 5.8, D26): an HS256 JWT made with
 * `jose`, claims `opcoId`, `method`, `route`, `instanceId`, `iat`, `exp` (= iat + 30), `iss`, `jti`.
 * The HMAC key is the 32 bytes of OPCO_PROXY_HUB_SECRET (64 hex characters).
 */
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { IssuedGrant } from './grant-budget.js';

export const DEFAULT_ISSUER = 'opco-proxy-hub';

export interface GrantClaims extends JWTPayload {
  opcoId: string;
  method: string;
  route: string;
  instanceId: string;
}

export class GrantSigner {
  private readonly key: Uint8Array;

  constructor(
    secretHex: string,
    private readonly issuer: string = DEFAULT_ISSUER,
  ) {
    this.key = secretKey(secretHex);
  }

  /** Times come from the scheduler, so the slot's deadline and the token's `exp` are the same instant. */
  sign(grant: IssuedGrant): Promise<string> {
    return new SignJWT({ opcoId: grant.opcoId, method: grant.method, route: grant.route, instanceId: grant.instanceId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.issuer)
      .setIssuedAt(grant.iat)
      .setExpirationTime(grant.exp)
      .setJti(grant.grantId)
      .sign(this.key);
  }
}

/** For an upstream or a test that checks a grant: resolves with its claims, throws when invalid. */
export async function verifyGrantToken(
  token: string,
  secretHex: string,
  issuer: string = DEFAULT_ISSUER,
): Promise<GrantClaims> {
  const { payload } = await jwtVerify<GrantClaims>(token, secretKey(secretHex), { issuer, algorithms: ['HS256'] });
  return payload;
}

function secretKey(secretHex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(secretHex)) throw new Error('the hub signing secret must be 64 hex characters');
  return new Uint8Array(Buffer.from(secretHex, 'hex'));
}
