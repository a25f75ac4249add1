/**
 * Mounts handlers by operation (the route manifest of schemas/): method, path, authentication,
 * query and body validation all come from the manifest, so a plugin only writes what the
 * operation does. Paths that start with a literal segment (`/sync/dossiers`, `/webhooks`) are
 * matched before those under `/{opcoId}/`, whatever the order of mounting, so an opcoId can never
 * shadow a service route. A wrong method on a known path answers 405 with `Allow`.
 *
 * Every operation is served the same way, whichever path the request took: its caller admitted
 * at the edge (edge.ts), then its query and body checked, then its answer, recorded when audited.
 * A GET URL of a read routed once is remembered, so the early path (early-path.ts) serves it again
 * without routing.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import {
  loadSchema,
  operations,
  routerPath,
  type AuditNote,
  type BodyOf,
  type OperationId,
  type QueryOf,
  type ReplyOf,
  type SchemaId,
} from '@opco-proxy/schemas';
import { asServiceError, createError } from '../errors/errors.js';
import { kernelError } from '../errors/kernel-errors.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { checkRequest } from '../pipeline/request-validation.js';
import type { Tenant } from '../pipeline/call-context.js';
import { Edge, type EdgeOptions, type Gate } from './edge.js';
import { readJsonBody, type BodyLimits, type JsonBody } from './request-body.js';
import type { BodyBounds } from '../limits/json-limits.js';
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

export type OperationHandler<Op extends OperationId> = (
  input: OperationInput<Op>,
) => Promise<ReplyOf<Op>> | ReplyOf<Op>;

/** An answer whose JSON is already at hand (a cache hit: bytes or text): written as is, not re-serialised. */
export class RawJson {
  constructor(readonly json: Buffer | string) {}
}

export type Reply = { status: number; body: unknown; headers?: Record<string, string>; audit?: AuditNote };

/** The request body's `opcoId` once read (a sync's), for its audit record: checked there against the configured ones. */
interface BodyRead {
  opcoId?: unknown;
}

/**
 * A GET answered at once from what the process holds (a cache's memory), or undefined to leave
 * it to the operation's handler. Synchronous, so that a read from memory waits on nothing.
 */
export type Shortcut<Op extends OperationId> = (
  input: Omit<OperationInput<Op>, 'body' | 'header'>,
) => { status: number; body: RawJson; headers?: Record<string, string> } | undefined;

/** One request to an operation, as the middleware chain or the early path hands it over. */
export interface OperationCall {
  req: IncomingMessage;
  params: Record<string, string>;
  requestId: string;
  traceparent?: string;
  /** The checked query; asked once the caller is admitted, so that a refused one learns nothing of it. */
  query(): Record<string, string>;
  /** The body as read, for the operations that take one. */
  readBody?(): Promise<JsonBody>;
}

/** A URL routed and validated before: its operation, parameters, checked query, and how it is served. */
export interface Recalled {
  operationId: OperationId;
  method: 'GET' | 'POST';
  route: string;
  params: Record<string, string>;
  query: Record<string, string>;
  /** How its body is read, for an operation that takes one. */
  body?: BodyLimits;
  serve(call: OperationCall): Promise<Reply>;
}

/** How many URLs are remembered; emptied whole when full, so a scan costs what it did before. */
const RECALLED_MAX = 1024;

export interface OperationRouterOptions extends EdgeOptions {
  bodyBytes: number;
  /** D7: each decoded `_files` entry at most this many bytes. */
  fileBytes: number;
  /** Values, fields per object, items per array and JSON bytes of a body (`limits`, issue 38); absent: the defaults. */
  bodyBounds?: BodyBounds;
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
  private readonly edge: Edge;
  private frozen = false;

  constructor(private readonly options: OperationRouterOptions) {
    this.edge = new Edge(options);
  }

  mount<Op extends OperationId>(id: Op, handler: NoInfer<OperationHandler<Op>>, owner: string): void {
    if (this.frozen) throw kernelError('OPCO_ERR_ROUTES_FROZEN', { what: `operation ${id}`, owner });
    if (!Object.hasOwn(operations, id)) throw kernelError('OPCO_ERR_ROUTE_UNKNOWN', { owner, operation: id });
    const existing = this.mounted.get(id);
    if (existing) throw kernelError('OPCO_ERR_ROUTE_TWICE', { operation: id, first: existing.owner, second: owner });
    this.mounted.set(id, { owner, handler: handler as unknown as OperationHandler<OperationId> });
  }

  /** A synchronous answer for a GET operation mounted by the same owner (a read from memory), tried before its handler. */
  mountShortcut<Op extends OperationId>(id: Op, shortcut: NoInfer<Shortcut<Op>>, owner: string): void {
    if (this.frozen) throw kernelError('OPCO_ERR_ROUTES_FROZEN', { what: `a shortcut for ${id}`, owner });
    const spec = operations[id] as { method: string; body?: string };
    if (spec.method !== 'GET' || spec.body || this.mounted.get(id)?.owner !== owner)
      throw kernelError('OPCO_ERR_ROUTE_SHORTCUT', { owner, operation: id });
    this.shortcuts.set(id, shortcut);
  }

  /**
   * A GET URL, or a POST URL of an operation that takes a body (a submission), of an operation
   * that answers JSON, routed and its query validated before: the early path (early-path.ts)
   * serves it without routing it again. Undefined for any other request.
   */
  recall(method: string | undefined, url: string): Recalled | undefined {
    return method === 'GET' ? this.recalled.get(url) : method === 'POST' ? this.recalled.get(`POST ${url}`) : undefined;
  }

  private remember(method: Recalled['method'], url: string, recalled: () => Recalled): void {
    const key = method === 'GET' ? url : `POST ${url}`;
    if (this.recalled.has(key)) return;
    if (this.recalled.size >= RECALLED_MAX) this.recalled.clear();
    this.recalled.set(key, recalled());
  }

  /** The operations served, in manifest order (what /doc documents). */
  ids(): OperationId[] {
    return (Object.keys(operations) as OperationId[]).filter((id) => this.mounted.has(id));
  }

  /** Builds the router once every plugin has mounted its operations; no mounting afterwards. */
  middleware(): Koa.Middleware<State> {
    this.frozen = true;
    const router = new Router<State>();
    const literalFirst = this.ids().sort(
      (a, b) => Number(operations[a].path.startsWith('/{')) - Number(operations[b].path.startsWith('/{')),
    );
    for (const id of literalFirst) {
      const spec = operations[id];
      router.register(routerPath(spec.path), [spec.method], this.endpoint(id));
    }
    const routes = router.routes();
    const allowed = router.allowedMethods();
    return async (ctx, next) => {
      await routes(ctx as never, () => allowed(ctx as never, next) as Promise<unknown>);
      // OPTIONS on a known path: the methods it takes, in Allow, and nothing else.
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.response.get('Allow')) ctx.status = 204;
    };
  }

  /** The route's middleware: the operation served from the context, its reply written to it (not yet sent). */
  private endpoint(id: OperationId): Router.Middleware<State> {
    const spec = operations[id] as (typeof operations)[OperationId] & { query?: string; body?: string };
    const serve = this.serving(id);
    const recallable =
      answersJson(spec) && (spec.method === 'GET' || (spec.method === 'POST' && spec.body !== undefined));
    // The operations whose body takes `_files` have them decoded as they arrive (request-body.ts).
    const limits = {
      limitBytes: this.options.bodyBytes,
      fileBytes: spec.body && takesFiles(spec.body) ? this.options.fileBytes : undefined,
      bounds: this.options.bodyBounds,
    };
    return async (ctx) => {
      ctx.state.operationId = id;
      const query = () => {
        const checked = spec.query ? checkQuery(ctx.query, spec.query) : {};
        if (recallable && ctx.method === spec.method) {
          const method = spec.method;
          this.remember(method, ctx.url, () => ({
            operationId: id,
            method,
            route: matchedRouteTemplate(ctx)!,
            params: Object.freeze({ ...ctx.params }),
            query: Object.freeze({ ...checked }),
            ...(spec.body && { body: limits }),
            serve,
          }));
        }
        return checked;
      };
      const readBody = spec.body ? () => readJsonBody(ctx.req, limits) : undefined;
      const reply = await serve({
        req: ctx.req,
        params: ctx.params,
        requestId: ctx.state.requestId,
        traceparent: ctx.state.traceparent,
        query,
        readBody,
      });
      ctx.status = reply.status;
      for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
      if (reply.body instanceof RawJson) {
        ctx.type = 'application/json';
        ctx.body = reply.body.json;
      } else {
        ctx.body = reply.body;
      }
    };
  }

  /** The caller admitted at the edge, then the operation answered and, when audited, recorded (D32). */
  private serving(id: OperationId): (call: OperationCall) => Promise<Reply> {
    const spec = operations[id] as { operator?: boolean; profileRoute?: string; apiKey?: boolean; method: string };
    const gate = {
      apiKey: spec.apiKey === true,
      operator: spec.operator === true,
      upstream: spec.profileRoute !== undefined,
      cost: gateCost(spec),
    };
    const audited = this.options.audit?.recorder(id);
    const answer = this.answering(id);
    return async (call) => {
      const tenant = await this.edge.admit(gate, call.req, call.params.opcoId);
      const read: BodyRead = {};
      if (!audited) return await answer(call, tenant, read);
      // D32: from here the caller is known, and every outcome is recorded before it leaves.
      const request = () =>
        ({
          actor: gate.operator ? 'operator' : 'tenant',
          tenant: tenant?.hash,
          params: call.params,
          bodyOpcoId: read.opcoId,
          requestId: call.requestId,
          clientAddress: this.edge.clientOf(call.req),
        }) as const;
      let reply: Reply;
      try {
        reply = await answer(call, tenant, read);
      } catch (err) {
        const error = asServiceError(err);
        await audited(request(), { status: error.status, error });
        throw err;
      }
      await audited(request(), { status: reply.status, body: reply.body, note: reply.audit });
      return reply;
    };
  }

  /** Query, body and the operation's answer: its shortcut's when it has one that answers, else its handler's. */
  private answering(
    id: OperationId,
  ): (call: OperationCall, tenant: Tenant | undefined, read: BodyRead) => Promise<Reply> {
    const spec = operations[id] as { body?: string };
    const handler = this.mounted.get(id)!.handler;
    const shortcut = this.shortcuts.get(id);
    return async (call, tenant, read) => {
      const { req, params, requestId, traceparent } = call;
      const query = call.query();
      let body: unknown;
      let received: JsonBody | undefined;
      try {
        if (spec.body && call.readBody) {
          received = await call.readBody();
          read.opcoId = (received.value as { opcoId?: unknown } | undefined)?.opcoId;
          checkRequest(spec.body, received.value);
          body = received.withFiles();
        }
        const input = {
          params,
          query: query as never,
          body: body as never,
          tenant: tenant as Tenant,
          requestId,
          traceparent,
          header: (name: string) => firstValue(req.headers[name.toLowerCase()]),
        };
        return (shortcut && req.method === 'GET' && shortcut(input)) || (await handler(input));
      } finally {
        // Files the handler did not consume (a refused body, a duplicate) are given back now.
        received?.discard();
      }
    };
  }
}

/**
 * What an operation costs an unproven tenant (Gate.cost, P13), from its manifest entry: a read
 * that reaches no upstream reads the tenant's own records; a read that does is a call; anything
 * else stores something.
 */
function gateCost(spec: { method: string; profileRoute?: string }): Gate['cost'] {
  if (spec.method !== 'GET') return 'held';
  return spec.profileRoute === undefined ? 'free' : 'call';
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
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

/** Whether every answer of an operation is JSON, which is all the early path writes. */
function answersJson(spec: { responses: object }): boolean {
  const responses = Object.values(spec.responses) as Array<{ contentType?: string | readonly string[] }>;
  return responses.every(({ contentType }) => contentType === undefined || contentType === 'application/json');
}

/** Whether a body schema declares `_files` (SPEC 4.0.4: the asynchronous POST operations). */
function takesFiles(schemaId: string): boolean {
  const properties = loadSchema(schemaId as SchemaId).properties as Record<string, unknown> | undefined;
  return properties?._files !== undefined;
}
