/** startSandbox: wires dataset, token issuer, faults and routes onto a node:http server. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dataset } from './dataset.js';
import { BodyTooLarge, mediaType, readBody, sendError } from './exchange.js';
import { FaultRegistry, TOKEN_ROUTE, playFault } from './faults.js';
import { MultipartError, parseMultipart } from './multipart.js';
import { TokenIssuer, handleTokenRequest } from './oauth.js';
import type { RouteContext } from './route-context.js';
import { handleUpstream } from './routes.js';
import type { ReceivedRequest, Sandbox, SandboxOptions } from './types.js';

export const SANDBOX_DEFAULTS = {
  port: 0,
  seed: 42,
  dossierCount: 300,
  factureCount: 120,
  pageSize: 100,
  tokenLifetimeS: 3600,
} as const;

const TOKEN_PATH = '/oauth/token';
/** POST /_sandbox/advance?dossiers=N&factures=M moves records to new states (see advance()). */
export const ADVANCE_PATH = '/_sandbox/advance';

/** Parses the body the way the route will need it, so `received` shows what was actually sent. */
async function record(req: IncomingMessage, path: string, url: URL, body: Buffer, at: number): Promise<{ entry: ReceivedRequest; bodyError?: string }> {
  const entry: ReceivedRequest = {
    at,
    method: req.method ?? 'GET',
    path,
    query: Object.fromEntries(url.searchParams),
    headers: { ...req.headers },
  };
  const type = mediaType(req);
  let bodyError: string | undefined;
  if (type === 'multipart/form-data') {
    try {
      entry.parts = await parseMultipart(req.headers, body);
    } catch (error) {
      if (!(error instanceof MultipartError)) throw error;
      bodyError = `corps multipart illisible : ${error.message}`;
    }
  } else if (body.length > 0 && (type === 'application/json' || type.endsWith('+json'))) {
    try {
      entry.json = JSON.parse(body.toString('utf8'));
    } catch {
      bodyError = 'corps JSON invalide';
    }
  }
  return { entry, bodyError };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const pageSize = options.pageSize ?? SANDBOX_DEFAULTS.pageSize;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const dataset = new Dataset({
    seed: options.seed ?? SANDBOX_DEFAULTS.seed,
    dossierCount: options.dossierCount ?? SANDBOX_DEFAULTS.dossierCount,
    factureCount: options.factureCount ?? SANDBOX_DEFAULTS.factureCount,
  });
  const issuer = new TokenIssuer(options.tokenLifetimeS ?? SANDBOX_DEFAULTS.tokenLifetimeS);
  const faults = new FaultRegistry();
  const received: ReceivedRequest[] = [];
  const stats = { tokenRequests: 0, calls: {} as Record<string, number> };

  let closed = false;
  // Wake-ups of pending latency faults, so close() does not wait for their timers.
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) => new Promise<boolean>((resolve) => {
    if (closed) {
      resolve(false);
      return;
    }
    const wake = () => {
      clearTimeout(timer);
      sleepers.delete(wake);
      resolve(false);
    };
    const timer = setTimeout(() => {
      sleepers.delete(wake);
      resolve(true);
    }, ms);
    sleepers.add(wake);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = Date.now();
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const path = url.pathname;
    const routeKey = `${req.method} ${path}`;
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (error) {
      if (error instanceof BodyTooLarge) sendError(res, 413, 'corps trop volumineux');
      return;
    }
    if (path === ADVANCE_PATH && req.method === 'POST') {
      // Test and demo control, outside the simulated API: no token, not recorded.
      const moved = sandbox.advance({ dossiers: Number(url.searchParams.get('dossiers') ?? 0), factures: Number(url.searchParams.get('factures') ?? 0) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(moved));
      return;
    }
    if (path === TOKEN_PATH) {
      stats.tokenRequests++;
      const fault = faults.take(TOKEN_ROUTE);
      if (fault && await playFault(fault, res, { sleep })) return;
      handleTokenRequest(req, res, body, issuer);
      return;
    }
    const { entry, bodyError } = await record(req, path, url, body, arrivedAt);
    received.push(entry);
    stats.calls[routeKey] = (stats.calls[routeKey] ?? 0) + 1;
    const fault = faults.take(routeKey);
    if (fault && await playFault(fault, res, { sleep })) return;
    const context: RouteContext = {
      req, res, query: entry.query, received: entry, bodyError, dataset, quirks: sandbox.quirks, pageSize,
    };
    handleUpstream(context, path, issuer);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      sendError(res, 500, `erreur interne du bac à sable : ${(error as Error).message}`);
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
    tokenUrl: `${url}${TOKEN_PATH}`,
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
      for (const key of Object.keys(stats.calls)) delete stats.calls[key];
    },
    advance: (moves) => dataset.advance(moves),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        clearInterval(advancing);
        for (const wake of [...sleepers]) wake();
        server.close(() => resolve());
        // Hanging requests and idle keep-alive sockets would otherwise keep close() pending forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
  const every = options.advanceEvery;
  const advancing = every && every.everyMs > 0
    ? setInterval(() => sandbox.advance({ dossiers: every.dossiers ?? 1, factures: every.factures ?? 1 }), every.everyMs).unref()
    : undefined;
  return sandbox;
}
