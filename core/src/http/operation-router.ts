/**
 * Mounts handlers by operation (the route manifest of schemas/): method, path, authentication,
 * query and body validation all come from the manifest, so a plugin only writes what the
 * operation does. Paths that start with a literal segment (`/sync/dossiers`, `/webhooks`) are
 * matched before those under `/{opcoId}/`, whatever the order of mounting, so an opcoId can never
 * shadow a service route. A wrong method on a known path answers 405 with `Allow`.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import { loadSchema, operations, routerPath, type AuditNote, type BodyOf, type OperationId, type QueryOf, type ReplyOf, type SchemaId } from '@opco-proxy/schemas';
import { asServiceError, createError } from '../errors.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { checkRequest } from '../request-validation.js';
import { authenticate, authenticateOperator } from '../tenant.js';
import type { Tenant } from '../call-context.js';
import type { RequestRate } from '../request-rate.js';
import type { TenantStanding } from '../tenant-standing.js';
import type { AddressLimits } from './address-limits.js';
import type { TrustedProxies } from './client-address.js';
import { readJsonBody, type JsonBody } from './request-body.js';
import { matchedRouteTemplate, type State } from './state.js';

export interface OperationInput<Op extends OperationId> {
  params: Record<string, string>;
  query: QueryOf<Op>;
  /**
   * A `_files` entry in it is the file's bytes as pages (Buffer[], request-body.ts), valid until
   * the handler's promise settles: their memory is given back then.
   */
  body: BodyOf<Op>;
  /** The caller (SPEC 5.3); set for every operation behind X-API-KEY. */
  tenant: Tenant;
  requestId: string;
  /** The client's W3C `traceparent`, when well formed. */
  traceparent?: string;
  header: (name: string) => string | undefined;
}

export type OperationHandler<Op extends OperationId> = (input: OperationInput<Op>) => Promise<ReplyOf<Op>> | ReplyOf<Op>;

/** An answer whose JSON is already at hand (a cache hit: bytes or text): written as is, not re-serialised. */
export class RawJson {
  constructor(readonly json: Buffer | string) {}
}

type Reply = { status: number; body: unknown; headers?: Record<string, string>; audit?: AuditNote };

/** The request body's `opcoId` once read (a sync's), for its audit record: checked there against the configured ones. */
interface BodyRead {
  opcoId?: unknown;
}

/**
 * A GET answered at once from what the process holds (a cache's memory), or undefined to take
 * the whole path. Synchronous: it runs before the request enters the middleware chain.
 */
export type Shortcut<Op extends OperationId> = (input: Omit<OperationInput<Op>, 'body' | 'header'>) => { status: number; body: RawJson; headers?: Record<string, string> } | undefined;

/** What `answerAtOnce` found: the reply, and the operation and route template it answered. */
export interface ShortcutAnswer {
  reply: { status: number; body: RawJson; headers?: Record<string, string> };
  operationId: OperationId;
  route: string;
}

/** A URL routed and validated before: its operation, path parameters and checked query. */
interface Recalled {
  id: OperationId;
  params: Record<string, string>;
  query: Record<string, string>;
  route: string;
}

/** How many URLs are remembered; emptied whole when full, so a scan costs what it did before. */
const RECALLED_MAX = 1024;
/** The tenant whose token the shortcut took for this request, so the whole path takes none. */
const RATE_TAKEN = Symbol('rate taken');

export interface OperationRouterOptions {
  bodyBytes: number;
  /** D7: each decoded `_files` entry at most this many bytes. */
  fileBytes: number;
  rate: RequestRate;
  allowList: ReadonlySet<string>;
  /** OPCO_PROXY_ADMIN_KEY: operator operations answer 403 without it. */
  adminKey?: string;
  /** What the upstream said of each tenant's key: refused keys are answered here, unproven ones limited per address. */
  standing: TenantStanding;
  addresses: AddressLimits;
  proxies: TrustedProxies;
  /** D32: the operations the manifest marks `audit` write their record through it. */
  audit?: AuditTrail;
}

interface Mounted {
  owner: string;
  handler: OperationHandler<OperationId>;
}

export class OperationRouter {
  private readonly mounted = new Map<OperationId, Mounted>();
  private readonly shortcuts = new Map<OperationId, Shortcut<OperationId>>();
  private readonly recalled = new Map<string, Recalled>();
  /** Reads recorded in the audit trail (`audit.reads`): never answered before the chain, which records them. */
  private readonly auditedReads = new Set<OperationId>();
  private frozen = false;

  constructor(private readonly options: OperationRouterOptions) {}

  mount<Op extends OperationId>(id: Op, handler: NoInfer<OperationHandler<Op>>, owner: string): void {
    if (this.frozen) throw new Error(`operation ${id} cannot be mounted by ${owner}: routes are fixed once the kernel is ready`);
    if (!Object.hasOwn(operations, id)) throw new Error(`${owner} mounts an unknown operation "${id}"`);
    const existing = this.mounted.get(id);
    if (existing) throw new Error(`operation ${id} is mounted twice: by ${existing.owner} and by ${owner}`);
    this.mounted.set(id, { owner, handler: handler as unknown as OperationHandler<OperationId> });
  }

  /** A synchronous answer for a GET operation mounted by the same owner (a read from memory). */
  mountShortcut<Op extends OperationId>(id: Op, shortcut: NoInfer<Shortcut<Op>>, owner: string): void {
    if (this.frozen) throw new Error(`a shortcut for ${id} cannot be mounted by ${owner}: routes are fixed once the kernel is ready`);
    const spec = operations[id] as { method: string; body?: string };
    if (spec.method !== 'GET' || spec.body || this.mounted.get(id)?.owner !== owner) throw new Error(`${owner} cannot mount a shortcut for ${id}: only for a GET operation it serves`);
    this.shortcuts.set(id, shortcut);
    if (this.options.audit?.recorder(id)) this.auditedReads.add(id);
  }

  /**
   * A GET whose URL was routed and validated before, answered at once by its operation's
   * shortcut when the caller's key passes and its rate allows; undefined leaves the request to
   * the whole path, which checks everything again and renders any refusal.
   */
  answerAtOnce(req: IncomingMessage, requestId: string, traceparent: string | undefined): ShortcutAnswer | undefined {
    const known = req.method === 'GET' ? this.recalled.get(req.url!) : undefined;
    if (!known || this.auditedReads.has(known.id)) return undefined;
    let tenant: Tenant;
    try {
      tenant = authenticate(req.headers['x-api-key'], this.options.allowList);
      // Only a key this process knows proven skips the whole path's standing checks.
      if (this.options.standing.known(known.params.opcoId, tenant.hash) !== 'proven') return undefined;
      this.options.rate.take(tenant.hash);
    } catch {
      return undefined;
    }
    (req as { [RATE_TAKEN]?: string })[RATE_TAKEN] = tenant.hash;
    let reply: ShortcutAnswer['reply'] | undefined;
    try {
      reply = this.shortcuts.get(known.id)!({ params: known.params, query: known.query as never, tenant, requestId, traceparent });
    } catch {
      return undefined; // the whole path meets the same refusal and renders it
    }
    return reply && { reply, operationId: known.id, route: known.route };
  }

  private remember(url: string, recalled: () => Recalled): void {
    if (this.recalled.has(url)) return;
    if (this.recalled.size >= RECALLED_MAX) this.recalled.clear();
    this.recalled.set(url, recalled());
  }

  /** The operations served, in manifest order (what /doc documents). */
  ids(): OperationId[] {
    return (Object.keys(operations) as OperationId[]).filter((id) => this.mounted.has(id));
  }

  /** Builds the router once every plugin has mounted its operations; no mounting afterwards. */
  middleware(): Koa.Middleware<State> {
    this.frozen = true;
    const router = new Router<State>();
    const literalFirst = this.ids().sort((a, b) => Number(operations[a].path.startsWith('/{')) - Number(operations[b].path.startsWith('/{')));
    for (const id of literalFirst) {
      const spec = operations[id];
      router.register(routerPath(spec.path), [spec.method], this.endpoint(id, this.mounted.get(id)!.handler));
    }
    const routes = router.routes();
    const allowed = router.allowedMethods();
    return async (ctx, next) => {
      await routes(ctx as never, () => allowed(ctx as never, next) as Promise<unknown>);
      // OPTIONS on a known path: the methods it takes, in Allow, and nothing else.
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.response.get('Allow')) ctx.status = 204;
    };
  }

  /** D8's checks of the key; a refusal counts against the address, an address out of tokens is 429 first. */
  private authenticateTenant(header: string | string[] | undefined, address: string): Tenant {
    try {
      return authenticate(header, this.options.allowList);
    } catch (err) {
      this.options.addresses.checkBeforeAuth(address);
      this.options.addresses.failedAuth(address);
      throw err;
    }
  }

  /**
   * Issue 27: a key the upstream refused lately is answered 403 here on the routes that reach
   * it (no budget spent, no cached answer served); a tenant the upstream has not accepted yet
   * (at this opcoId, or anywhere for the routes that name none) spends a token of its address.
   */
  private async checkStanding(tenant: Tenant, opcoId: string | undefined, upstream: boolean, address: string): Promise<void> {
    const { standing, addresses } = this.options;
    let now = standing.known(opcoId, tenant.hash);
    if (now === 'proven') return;
    try {
      now = upstream && opcoId !== undefined ? await standing.assertNotRefused(opcoId, tenant.hash) : (now ?? (await standing.of(opcoId, tenant.hash)));
    } catch (err) {
      addresses.failedAuth(address);
      throw err;
    }
    if (now !== 'proven') addresses.takeUnproven(address);
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

  private endpoint(id: OperationId, handler: OperationHandler<OperationId>): Router.Middleware<State> {
    const spec = operations[id] as (typeof operations)[OperationId] & { query?: string; body?: string };
    const { rate } = this.options;
    const upstream = (spec as { profileRoute?: string }).profileRoute !== undefined;
    const operator = (spec as { operator?: boolean }).operator === true;
    const audited = this.options.audit?.recorder(id);
    const answer = this.answering(id, spec, handler);
    return async (ctx) => {
      ctx.state.operationId = id;
      const address = this.options.proxies.clientOf(ctx.req);
      let tenant: Tenant | undefined;
      if (spec.apiKey) {
        tenant = this.authenticateTenant(ctx.headers['x-api-key'], address);
        if ((ctx.req as { [RATE_TAKEN]?: string })[RATE_TAKEN] !== tenant.hash) rate.take(tenant.hash);
        ctx.state.tenant = tenant;
        await this.checkStanding(tenant, ctx.params.opcoId, upstream, address);
      }
      if (operator) this.authenticateOperator(ctx.get('authorization'), address);
      const read: BodyRead = {};
      if (!audited) return void (await answer(ctx, tenant, read));
      // D32: from here the caller is known, and every outcome is recorded before it leaves.
      const request = () => ({ actor: operator ? 'operator' : 'tenant', tenant: tenant?.hash, params: ctx.params, bodyOpcoId: read.opcoId, requestId: ctx.state.requestId, clientAddress: address }) as const;
      let reply: Reply;
      try {
        reply = await answer(ctx, tenant, read);
      } catch (err) {
        const error = asServiceError(err);
        await audited(request(), { status: error.status, error });
        throw err;
      }
      await audited(request(), { status: reply.status, body: reply.body, note: reply.audit });
    };
  }

  /** Query, body and handler of an operation, the reply written to the context (not yet sent). */
  private answering(id: OperationId, spec: { query?: string; body?: string }, handler: OperationHandler<OperationId>): (ctx: Koa.ParameterizedContext<State>, tenant: Tenant | undefined, read: BodyRead) => Promise<Reply> {
    const shortcut = this.shortcuts.has(id);
    // The operations whose body takes `_files` have them decoded as they arrive (request-body.ts).
    const limits = { limitBytes: this.options.bodyBytes, fileBytes: spec.body && takesFiles(spec.body) ? this.options.fileBytes : undefined };
    return async (ctx, tenant, read) => {
      const query = spec.query ? checkQuery(ctx.query, spec.query) : {};
      if (shortcut && ctx.method === 'GET') this.remember(ctx.url, () => ({ id, params: Object.freeze({ ...(ctx.params as Record<string, string>) }), query: Object.freeze({ ...query }), route: matchedRouteTemplate(ctx)! }));
      let body: unknown;
      let received: JsonBody | undefined;
      let reply: Reply;
      try {
        if (spec.body) {
          received = await readJsonBody(ctx, limits);
          read.opcoId = (received.value as { opcoId?: unknown } | undefined)?.opcoId;
          checkRequest(spec.body, received.value);
          body = received.withFiles();
        }
        reply = await handler({
          params: ctx.params as Record<string, string>,
          query: query as never,
          body: body as never,
          tenant: tenant as Tenant,
          requestId: ctx.state.requestId,
          traceparent: ctx.state.traceparent,
          header: (name) => {
            const value = ctx.headers[name.toLowerCase()];
            return Array.isArray(value) ? value[0] : value;
          },
        });
      } finally {
        // Files the handler did not consume (a refused body, a duplicate) are given back now.
        received?.discard();
      }
      ctx.status = reply.status;
      for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
      if (reply.body instanceof RawJson) {
        ctx.type = 'application/json';
        ctx.body = reply.body.json;
      } else {
        ctx.body = reply.body;
      }
      return reply;
    };
  }
}

/** Query strings arrive as strings; a repeated parameter is refused rather than guessed at. */
function checkQuery(query: Record<string, string | string[] | undefined>, schema: string): Record<string, string> {
  const flat: Record<string, string> = {};
  const errors: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) errors.push(`${name}: must be given once`);
    else if (value !== undefined) flat[name] = value;
  }
  if (errors.length > 0) throw createError('VALIDATION_ERROR', 'invalid query parameters', { errors });
  return checkRequest(schema, flat, 'invalid query parameters');
}

/** Whether a body schema declares `_files` (SPEC 4.0.4: the asynchronous POST operations). */
function takesFiles(schemaId: string): boolean {
  const properties = loadSchema(schemaId as SchemaId).properties as Record<string, unknown> | undefined;
  return properties?._files !== undefined;
}
