/**
 * The public edge (P13, D8): who may call an operation. The caller's key (shape and allow-list),
 * its tenant's rate (D6), what the upstream said of the key lately (TenantStanding), the
 * operator's key (P9), and the limits of the client's address, which failed and unproven
 * callers spend. Every request that reaches an operation passes here once, whichever way it
 * came in (the middleware chain or the early path, http/early-path.ts).
 */
import type { IncomingMessage } from 'node:http';
import { authenticate, authenticateOperator } from './tenant.js';
import type { Tenant } from '../pipeline/call-context.js';
import type { RequestRate } from '../limits/request-rate.js';
import type { Standing, TenantStanding } from '../limits/tenant-standing.js';
import { addressKey, type AddressLimits } from '../limits/address-limits.js';
import type { TrustedProxies } from './client-address.js';

export interface EdgeOptions {
  rate: RequestRate;
  allowList: ReadonlySet<string>;
  /** OPCO_PROXY_ADMIN_KEY: operator operations answer 403 without it. */
  adminKey?: string;
  /** What the upstream said of each tenant's key: refused keys are answered here, unproven ones limited per address. */
  standing: TenantStanding;
  addresses: AddressLimits;
  proxies: TrustedProxies;
}

/** What an operation asks of its caller (its manifest entry). */
export interface Gate {
  /** Behind X-API-KEY (SPEC 5.1). */
  apiKey: boolean;
  /** Behind the operator key (P9). */
  operator: boolean;
  /** Reaches the upstream (a `profileRoute`): a key refused there lately is refused here. */
  upstream: boolean;
  /**
   * What the operation costs while the key is unproven (issue 37, P13): `free` reads the
   * tenant's own records (no standing asked, no address token); `call` is a synchronous
   * upstream read (an address token); `held` stores something (a job, a webhook, a sync):
   * no token, bounded by what the address's unproven tenants hold (held-work.ts).
   */
  cost: 'free' | 'call' | 'held';
}

export class Edge {
  constructor(private readonly options: EdgeOptions) {}

  /**
   * Admits the caller of an operation, returning its tenant (the operations behind X-API-KEY), or
   * throws the refusal; `opcoId` is the path's, if any. The client's address is worked out only
   * when a limit of its own is at stake: a proven caller's request costs none of it.
   */
  async admit(gate: Gate, req: IncomingMessage, opcoId: string | undefined): Promise<Tenant | undefined> {
    let tenant: Tenant | undefined;
    if (gate.apiKey) {
      tenant = this.authenticateTenant(req);
      // D6 per tenant and per kind (issue 37): reads of its own records have a bucket of their
      // own, so a burst of submissions never leaves their status polls without tokens.
      this.options.rate.take(gate.cost === 'free' ? `${tenant.hash}/own` : tenant.hash);
      if (gate.cost !== 'free') {
        const known = this.options.standing.known(opcoId, tenant.hash);
        if (known !== 'proven') await this.checkStanding(tenant, opcoId, known, gate, this.clientOf(req));
      }
    }
    if (gate.operator) this.authenticateOperator(req.headers.authorization ?? '', this.clientOf(req));
    return tenant;
  }

  /** The client's address, as the trusted proxies tell it (what its limits and audit records are kept by). */
  clientOf(req: IncomingMessage): string {
    return this.options.proxies.clientOf(req);
  }

  /** D8's checks of the key; a refusal counts against the address, an address out of tokens is 429 first. */
  private authenticateTenant(req: IncomingMessage): Tenant {
    try {
      return authenticate(req.headers['x-api-key'], this.options.allowList);
    } catch (err) {
      const address = this.clientOf(req);
      this.options.addresses.checkBeforeAuth(address);
      this.options.addresses.failedAuth(address);
      throw err;
    }
  }

  /**
   * P13: a key the upstream refused lately is answered 403 here on the routes that reach it (no
   * budget spent, no cached answer served). A tenant the upstream has not accepted yet (at this
   * opcoId, or anywhere for the routes that name none) spends a token of its address for a
   * synchronous upstream read; what it stores is marked with its address instead, and bounded
   * by what that address's unproven tenants hold (held-work.ts), not by its request count.
   */
  private async checkStanding(
    tenant: Tenant,
    opcoId: string | undefined,
    known: Standing | undefined,
    gate: Gate,
    address: string,
  ): Promise<void> {
    const { standing, addresses } = this.options;
    let now = known;
    try {
      now =
        gate.upstream && opcoId !== undefined
          ? await standing.assertNotRefused(opcoId, tenant.hash)
          : (now ?? (await standing.of(opcoId, tenant.hash)));
    } catch (err) {
      addresses.failedAuth(address);
      throw err;
    }
    if (now === 'proven') return;
    if (gate.cost === 'call') addresses.takeUnproven(address);
    else tenant.unprovenFrom = addressKey(address);
  }

  /** P9's operator key, behind the address's backoff: wrong keys slow their address down, not the operator elsewhere. */
  private authenticateOperator(header: string, address: string): void {
    const { addresses, adminKey } = this.options;
    addresses.checkBackoff(address);
    try {
      authenticateOperator(header, adminKey);
    } catch (err) {
      if ((err as { code?: string }).code === 'UNAUTHORIZED') addresses.operatorFailed(address);
      throw err;
    }
    addresses.operatorSucceeded(address);
  }
}
