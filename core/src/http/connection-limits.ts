/**
 * Slow and greedy clients (issue 38, point 6; docs/operations.md, Slow clients). What a client may
 * hold of the HTTP server, each bound from the config's `server` section:
 *
 * - its headers must arrive whole within `headersTimeoutMs` of the request's first byte (of the
 *   connection, for its first request), and the whole request within `requestTimeoutMs`: Node's
 *   own `headersTimeout` and `requestTimeout`, checked every CHECK_INTERVAL_MS instead of Node's
 *   30 s (with its defaults, a slowloris socket lived 60 to 90 s);
 * - its body must keep coming while the service waits for it: nothing for `bodyIdleTimeoutMs`,
 *   or less than `minBodyBytesPerSecond` on average once it has been waited for that long, and
 *   the request is over (Node has no such rule: a body trickled a byte a second stayed until
 *   `requestTimeout`). Time the service itself is not reading (the body waiting in its buffer)
 *   is not counted against the client;
 * - a connection kept alive with nothing to do is closed after `keepAliveTimeoutMs`;
 * - one client address (an IPv6 client by its /64, as address-limits.ts counts it) holds at most
 *   `maxConnectionsPerAddress` connections at once. The trusted proxies are not counted: the
 *   balancer carries everybody's connections, and the per-address limits behind it (P13) count
 *   its clients by X-Forwarded-For. A connection over the cap is answered at once, before it is
 *   parsed, with 429 RATE_LIMITED (the error body, Retry-After), then closed lingering: a client
 *   reads why, where a reset would be retried blindly; it is the address's own excess, not the
 *   service's trouble (503 would make a balancer think the instance is down).
 *
 * A request over time is answered 408 in the error body (client-errors.ts, as Node's own timeouts
 * are), and its connection destroyed about ANSWERED_CLOSE_MS later whatever the client does: a
 * client that ignores the end of the answer and trickles on is not kept.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import { API_VERSION, type KernelConfig } from '@opco-proxy/schemas';
import { DEFAULTS } from '../config/config.js';
import { createError, toErrorBody } from '../errors/errors.js';
import { ConfigError } from '../errors/kernel-errors.js';
import { addressKey } from '../limits/address-limits.js';
import type { TrustedProxies } from './client-address.js';
import { linger } from './lingering-close.js';

export type ServerLimits = Required<NonNullable<KernelConfig['server']>>;

/** The schema's defaults (kernel-config.schema.json, `server`): the one place they are written. */
export const SERVER_LIMITS: ServerLimits = Object.freeze({
  ...(DEFAULTS as unknown as { server: ServerLimits }).server,
});

/** How often timeouts are checked: Node's `connectionsCheckingInterval`, and the body watch. */
export const CHECK_INTERVAL_MS = 1000;
/** How long a connection answered 408 (or refused by a parse error) is left to read its answer. */
const ANSWERED_CLOSE_MS = 1000;
/** Seconds a connection refused over the per-address cap is told to wait. */
const CAP_RETRY_AFTER_S = 1;

export type ConnectionClose =
  'headers-timeout' | 'request-timeout' | 'body-stalled' | 'body-too-slow' | 'per-address-cap';

export interface GuardOptions {
  /** Their connections are not counted against the per-address cap. */
  proxies?: TrustedProxies;
  /** Where `opco_proxy_connections_closed_total` is counted. */
  registry?: Registry;
}

/** The config's `server` section with every default; a headers timeout over the request timeout is refused (Node would throw). */
export function serverLimits(config: object = {}): ServerLimits {
  const limits: ServerLimits = { ...SERVER_LIMITS, ...(config as { server?: Partial<ServerLimits> }).server };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `server.headersTimeoutMs (${limits.headersTimeoutMs}) must not exceed server.requestTimeoutMs (${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

/** Node's part of the bounds, as `createServer` options. */
export function httpServerOptions(limits: ServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: CHECK_INTERVAL_MS,
  };
}

/** Sockets a guarded server answered 408 (a request not received in time). */
const timedOut = new WeakSet<Duplex>();

/** Whether the connection was answered 408: its request's handler, cut short, says so too (the access line). */
export function answeredTimeout(socket: Duplex | null | undefined): boolean {
  return socket ? timedOut.has(socket) : false;
}

/** An HTTP server bound as `limits` say: Node's timeouts, the body watch, the per-address cap. */
export function createGuardedServer(
  limits: ServerLimits,
  handler: RequestListener,
  options: GuardOptions = {},
): Server {
  const closes = closeCounter(options.registry);
  const bodies = new BodyWatch(limits, (socket, reason) => {
    closes?.inc({ reason });
    timedOut.add(socket);
    // The path of Node's own timeouts: clientError answers 408 (client-errors.ts) and ends.
    server.emit(
      'clientError',
      Object.assign(new Error(`request body ${reason === 'body-stalled' ? 'stalled' : 'too slow'}`), {
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
      }),
      socket,
    );
  });
  const server = createServer(httpServerOptions(limits), (req, res) => {
    bodies.watch(req, res);
    handler(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !timedOut.has(socket)) {
      timedOut.add(socket);
      // A request already handed to the service has its answer assigned to the socket.
      closes?.inc({
        reason: (socket as Socket & { _httpMessage?: unknown })._httpMessage ? 'request-timeout' : 'headers-timeout',
      });
    }
    // Alone (no client-errors.ts), as Node would answer without a listener: a bare status.
    if (server.listenerCount('clientError') === 1 && socket.writable && err.code !== 'ECONNRESET') {
      socket.end(
        `HTTP/1.1 ${err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      );
    }
    closeAfterAnswer(socket);
  });
  if (limits.maxConnectionsPerAddress > 0)
    capPerAddress(server, limits.maxConnectionsPerAddress, options.proxies, () =>
      closes?.inc({ reason: 'per-address-cap' }),
    );
  const sweep = setInterval(() => bodies.sweep(), CHECK_INTERVAL_MS).unref();
  server.once('close', () => clearInterval(sweep));
  return server;
}

/**
 * Whatever the client does after an answer that closes its connection, the connection is gone
 * ANSWERED_CLOSE_MS later, give or take half of it: connections timed out by the same check are
 * not all destroyed in one tick (each destroyed request is then ended by its handler, access
 * line and audit record included), so a slowloris of hundreds costs no pause in the answers.
 */
function closeAfterAnswer(socket: Duplex): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), ANSWERED_CLOSE_MS * (0.5 + Math.random())).unref();
  socket.once('close', () => clearTimeout(timer));
}

function closeCounter(registry: Registry | undefined): Counter<'reason'> | undefined {
  if (!registry) return undefined;
  const name = 'opco_proxy_connections_closed_total';
  return (
    (registry.getSingleMetric(name) as Counter<'reason'> | undefined) ??
    new Counter({
      name,
      help: 'Connections the HTTP server closed on a slow or greedy client: headers-timeout, request-timeout, body-stalled, body-too-slow (answered 408), per-address-cap (refused 429 at accept)',
      labelNames: ['reason'] as const,
      registers: [registry],
    })
  );
}

/** IPv4 clients of a dual-stack socket show as `::ffff:a.b.c.d`. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && !address.slice(7).includes(':') ? address.slice(7) : address;
}

/**
 * Counts connections by address; one over the cap never reaches the HTTP parser: Node's own
 * 'connection' listener is called only for the connections let in.
 */
function capPerAddress(server: Server, max: number, proxies: TrustedProxies | undefined, refused: () => void): void {
  const open = new Map<string, number>();
  const parsers = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const answer = refusal(max);
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress === undefined ? undefined : plainAddress(socket.remoteAddress);
    if (address === undefined || proxies?.trusts(address)) {
      for (const parser of parsers) parser.call(server, socket);
      return;
    }
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= max) {
      refused();
      // A reset while lingering has nobody to tell.
      socket.on('error', () => socket.destroy());
      socket.write(answer);
      linger(socket);
      return;
    }
    open.set(key, count + 1);
    // Counted until the service has ended its side: a connection closing lingering (its client
    // already gone to a new one) or answered 408 is on its way out, within its own bounds.
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    };
    socket.once('finish', release);
    socket.once('close', release);
    for (const parser of parsers) parser.call(server, socket);
  });
}

function refusal(max: number): string {
  const error = createError(
    'RATE_LIMITED',
    `too many connections from this address: at most ${max} at once; reuse connections (keep-alive) or open fewer`,
  );
  const body = JSON.stringify(toErrorBody(error));
  return (
    'HTTP/1.1 429 Too Many Requests\r\n' +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Svc-Api-Version: ${API_VERSION}\r\n` +
    `Retry-After: ${CAP_RETRY_AFTER_S}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  startBytes: number;
  bytes: number;
  checkedAt: number;
  /** Time the service has waited for the client, in all and since its last byte. */
  owedMs: number;
  quietMs: number;
}

/** Whether the request announces a body (a length, or chunked transfer). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The bodies being received, looked at every CHECK_INTERVAL_MS: the bytes their socket has read,
 * and whether the service is waiting for more (it has taken all it got: nothing buffered in the
 * request) or is behind (then the time is not the client's).
 */
class BodyWatch {
  private readonly watched = new Map<IncomingMessage, Watched>();

  constructor(
    private readonly limits: ServerLimits,
    private readonly timedOut: (socket: Socket, reason: 'body-stalled' | 'body-too-slow') => void,
  ) {}

  watch(req: IncomingMessage, res: ServerResponse): void {
    if (req.complete || !hasBody(req)) return;
    const bytes = req.socket.bytesRead;
    this.watched.set(req, { req, res, startBytes: bytes, bytes, checkedAt: performance.now(), owedMs: 0, quietMs: 0 });
    const done = () => this.watched.delete(req);
    req.once('end', done);
    req.once('close', done);
    res.once('close', done);
  }

  sweep(): void {
    const now = performance.now();
    const { bodyIdleTimeoutMs, minBodyBytesPerSecond } = this.limits;
    for (const entry of this.watched.values()) {
      const { req, res } = entry;
      const socket = req.socket;
      // An answer already begun (a refusal that closes lingering, lingering-close.ts) has its own bounds.
      if (req.complete || res.headersSent || socket.destroyed) {
        this.watched.delete(req);
        continue;
      }
      const elapsed = now - entry.checkedAt;
      entry.checkedAt = now;
      const waiting = req.readableLength === 0;
      const bytes = socket.bytesRead;
      if (bytes > entry.bytes) {
        entry.bytes = bytes;
        entry.quietMs = 0;
      } else if (waiting) entry.quietMs += elapsed;
      if (waiting) entry.owedMs += elapsed;
      let reason: 'body-stalled' | 'body-too-slow' | undefined;
      if (entry.quietMs >= bodyIdleTimeoutMs) reason = 'body-stalled';
      else if (
        minBodyBytesPerSecond > 0 &&
        entry.owedMs >= bodyIdleTimeoutMs &&
        (bytes - entry.startBytes) * 1000 < minBodyBytesPerSecond * entry.owedMs
      )
        reason = 'body-too-slow';
      if (reason) {
        this.watched.delete(req);
        this.timedOut(socket, reason);
      }
    }
  }
}
