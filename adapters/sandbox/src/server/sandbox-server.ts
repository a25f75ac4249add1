/** startSandbox: wires dataset, shape, authentication, faults and routes onto a node:http server. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Timer } from '@opco-proxy/core';
import { CLASSIC_SHAPE } from './classic-shape.js';
import { COMMON_SHAPE } from './common-shape.js';
import { Dataset } from './dataset.js';
import { BodyTooLarge, readBody } from './exchange.js';
import { FaultRegistry, playFault } from './faults.js';
import { HubTokenVerifier } from './hub-token.js';
import { TokenIssuer, handleTokenRequest } from './oauth.js';
import { record } from './recording.js';
import type { RouteContext } from './route-context.js';
import { handleUpstream } from './routes.js';
import type { Shape } from './shape.js';
import type {
  ReceivedRequest,
  Sandbox,
  SandboxOptions,
  SandboxShape,
  SandboxStats,
  TokenRequestRecord,
} from './types.js';
import { apiKeyGuard, bearerGuard, resolveAuth } from './upstream-auth.js';

export const SANDBOX_DEFAULTS = {
  port: 0,
  seed: 42,
  dossierCount: 300,
  factureCount: 120,
  pageSize: 100,
  tokenLifetimeS: 3600,
} as const;

/** POST /_sandbox/advance?dossiers=N&factures=M moves records to new states (see advance()). */
export const ADVANCE_PATH = '/_sandbox/advance';

const SHAPES: Readonly<Record<SandboxShape, Shape>> = { common: COMMON_SHAPE, classic: CLASSIC_SHAPE };

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const pageSize = options.pageSize ?? SANDBOX_DEFAULTS.pageSize;
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const dataset = new Dataset({
    seed: options.seed ?? SANDBOX_DEFAULTS.seed,
    dossierCount: options.dossierCount ?? SANDBOX_DEFAULTS.dossierCount,
    factureCount: options.factureCount ?? SANDBOX_DEFAULTS.factureCount,
  });
  const clock = options.clock ?? systemClock;
  const shapeName = options.shape ?? 'common';
  const shape = SHAPES[shapeName];
  if (!shape) throw new TypeError(`shape must be 'common' or 'classic', got ${String(shapeName)}`);
  const auth = resolveAuth(shapeName, options.auth, [ADVANCE_PATH]);
  const tokenPath = auth.mode === 'oauth' ? auth.tokenPath : undefined;
  const hub = options.hubSecret === undefined ? undefined : new HubTokenVerifier(options.hubSecret);
  const issuer = new TokenIssuer(options.tokenLifetimeS ?? SANDBOX_DEFAULTS.tokenLifetimeS, clock);
  const guard = auth.mode === 'oauth' ? bearerGuard(issuer) : apiKeyGuard(auth);
  const tokenRoute = tokenPath === undefined ? undefined : `POST ${tokenPath}`;
  const faults = new FaultRegistry(tokenRoute);
  const acceptedKeys = options.acceptedKeys === undefined ? undefined : new Set(options.acceptedKeys);
  const received: ReceivedRequest[] = [];
  const stats: SandboxStats = { tokenRequests: 0, tokenRequestsLog: [], calls: {} };
  let tokenRequestsInFlight = 0;

  let closed = false;
  // Wake-ups of pending latency faults, so close() does not wait for their timers.
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (closed) {
        resolve(false);
        return;
      }
      const wake = () => {
        timer.cancel();
        sleepers.delete(wake);
        resolve(false);
      };
      const timer = clock.setTimeout(() => {
        sleepers.delete(wake);
        resolve(true);
      }, ms);
      sleepers.add(wake);
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = clock.now();
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const path = url.pathname;
    const routeKey = `${req.method} ${path}`;
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (error) {
      if (error instanceof BodyTooLarge) shape.error(res, 413, shape.messages.bodyTooLarge);
      return;
    }
    if (path === ADVANCE_PATH && req.method === 'POST') {
      // Test and demo control, outside the simulated API: no token, not recorded.
      const moved = sandbox.advance({
        dossiers: Number(url.searchParams.get('dossiers') ?? 0),
        factures: Number(url.searchParams.get('factures') ?? 0),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(moved));
      return;
    }
    if (auth.mode === 'oauth' && path === auth.tokenPath) {
      stats.tokenRequests++;
      const log: TokenRequestRecord = { at: arrivedAt, style: 'none', concurrent: ++tokenRequestsInFlight };
      stats.tokenRequestsLog.push(log);
      res.once('close', () => {
        tokenRequestsInFlight--;
        if (res.writableFinished) log.status = res.statusCode;
      });
      const fault = faults.take(tokenRoute!);
      if (fault && (await playFault(fault, res, { sleep, defaultBody: shape.faultBody }))) return;
      handleTokenRequest(req, res, body, issuer, auth, log);
      return;
    }
    const { entry, bodyError } = await record(req, path, url, body, arrivedAt, hub);
    received.push(entry);
    stats.calls[routeKey] = (stats.calls[routeKey] ?? 0) + 1;
    const fault = faults.take(routeKey);
    if (fault && (await playFault(fault, res, { sleep, defaultBody: shape.faultBody }))) return;
    const context: RouteContext = {
      req,
      res,
      query: entry.query,
      received: entry,
      bodyError,
      dataset,
      quirks: sandbox.quirks,
      pageSize,
    };
    handleUpstream(context, path, shape, guard, acceptedKeys);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      shape.error(res, 500, shape.messages.internal((error as Error).message));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? SANDBOX_DEFAULTS.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  const sandbox: Sandbox = {
    url,
    tokenUrl: tokenPath === undefined ? '' : `${url}${tokenPath}`,
    shape: shapeName,
    auth,
    quirks: {
      stateTypos: options.quirks?.stateTypos ?? true,
      bareArrays: options.quirks?.bareArrays ?? true,
    },
    faults,
    received,
    stats,
    dataset,
    setTokenLifetime: (seconds) => issuer.setLifetime(seconds),
    revokeTokens: () => issuer.revokeAll(),
    // Cleared in place: tests may hold a reference to `received` or `stats`.
    resetStats: () => {
      received.length = 0;
      stats.tokenRequests = 0;
      stats.tokenRequestsLog.length = 0;
      for (const key of Object.keys(stats.calls)) delete stats.calls[key];
    },
    advance: (moves) => dataset.advance(moves),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        advancing?.cancel();
        for (const wake of [...sleepers]) wake();
        server.close(() => resolve());
        // Hanging requests and idle keep-alive sockets would otherwise keep close() pending forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
  const every = options.advanceEvery;
  // Re-armed after each move on the sandbox's clock (a Clock has no interval); never keeps the process alive.
  let advancing: Timer | undefined;
  const advanceLater = (everyMs: number, moves: { dossiers: number; factures: number }) => {
    advancing = clock.setTimeout(() => {
      if (closed) return;
      sandbox.advance(moves);
      advanceLater(everyMs, moves);
    }, everyMs);
  };
  if (every && every.everyMs > 0)
    advanceLater(every.everyMs, { dossiers: every.dossiers ?? 1, factures: every.factures ?? 1 });
  return sandbox;
}
