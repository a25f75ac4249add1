/**
 * The hub process (D26, D28): one HTTP server carrying the Koa app (health, metrics, admin API)
 * and the WebSocket endpoint `/ws?apiKey=KEY` of the instances. Keys are checked before the
 * upgrade, so an unknown or deleted key gets a plain HTTP 401/403 and never a `101`; each such
 * refusal takes a token of the client address's bucket, and an address without tokens left gets
 * 429 with Retry-After instead (issue 27: guessing keys costs the guesser's time, not the hub's).
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  asServiceError,
  ConfigError,
  createError,
  createLogger,
  systemClock,
  toErrorBody,
  type Clock,
  type Logger,
  type ServiceError,
  type Store,
} from '@opco-proxy/core';
import { AddressLimits } from '@opco-proxy/core/limits';
import {
  createGuardedServer,
  openStore,
  SERVER_LIMITS,
  TrustedProxies,
  type ConfigFlags,
  type Drivers,
} from '@opco-proxy/core/application';
import { MAX_MESSAGE_BYTES, prepareProtocol, type WelcomeMessage } from '@opco-proxy/plugin-hub';
import { createHubApp } from './hub-app.js';
import { loadHubConfig, rateLimits, readHubSecrets, type HubServerConfig, type HubStoreConfig } from './hub-config.js';
import { createHubMetrics } from './hub-metrics.js';
import { GrantJournal } from './grant-journal.js';
import { hubId, HubLeadership, soloLeadership, type Leadership, type LeadershipView } from './hub-leadership.js';
import { GrantScheduler, type SchedulerObserver } from './grant-scheduler.js';
import { GrantSigner } from './grant-token.js';
import { HubKeys, type HubKey } from './hub-keys.js';
import { InstanceSession, requestedProtocol } from './instance-session.js';

export interface StartHubOptions {
  config: HubServerConfig;
  /** Holds OPCO_PROXY_HUB_SECRET and OPCO_PROXY_HUB_ADMIN_KEY. */
  env: NodeJS.ProcessEnv;
  /** Opened by the caller, closed by the caller. */
  store: Store;
  clock?: Clock;
  log?: Logger;
  /** The file POST /admin/reload re-reads; without it, reload answers 409. */
  configPath?: string;
  /** How often the hub pings instances (default 10 s). */
  heartbeatMs?: number;
}

export interface RunningHub {
  /** `http://host:port`; instances use the same address with ws://. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const DEFAULT_HEARTBEAT_MS = 10_000;
/** The close code of instance connections when this hub stops leading (failover). */
export const NOT_LEADER_CLOSE = 4004;
/** How long a stopping hub waits for instances to answer its close frames. */
const CLOSE_GRACE_MS = 1000;

export async function startHub(options: StartHubOptions): Promise<RunningHub> {
  const { config, env, store } = options;
  const secrets = readHubSecrets(env);
  prepareProtocol();
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger({ level: config.logLevel });
  const keys = new HubKeys(store);
  await keys.init();
  const metrics = createHubMetrics();
  const signer = new GrantSigner(secrets.signingSecret, config.issuer);
  const addresses = new AddressLimits(config.addressRateLimit, clock, metrics.addressRefused);
  const proxies = new TrustedProxies(config.trustedProxies);
  const sessions = new Set<InstanceSession>();
  let closing = false;
  let url = '';
  /** Survive a change of leader: a reloaded limit holds for the next term too. */
  let limits = rateLimits(config);
  let unprovenShare = config.unprovenShare;
  /** What this hub grants with while it leads (failover: from taking the lease to losing it). */
  let term: { scheduler: GrantScheduler; journal: GrantJournal } | undefined;

  /** A new term starts from the journal the previous leader (or this hub before a restart) wrote. */
  const lead = async () => {
    endTerm('a new term');
    const journal = new GrantJournal(store, clock);
    const observer: SchedulerObserver = {
      ...metrics.observer,
      ended: ({ id, at, windowMs, outcome }) => {
        journal
          .ended(id, at, windowMs, outcome)
          .catch((err: Error) => log.error({ error: err.message }, 'grant journal write failed'));
      },
    };
    const scheduler = new GrantScheduler({ clock, opcos: limits, adaptive: config.adaptive, unprovenShare, observer });
    try {
      scheduler.restore(await journal.load());
    } catch (err) {
      scheduler.close();
      journal.close();
      throw err;
    }
    term = { scheduler, journal };
    metrics.watch(scheduler);
  };
  const endTerm = (reason: string) => {
    term?.scheduler.close();
    term?.journal.close();
    term = undefined;
    metrics.watch(undefined);
    for (const session of [...sessions]) session.close(NOT_LEADER_CLOSE, `not leader: ${reason}`);
  };
  const leadership = config.failover
    ? new HubLeadership({
        store,
        clock,
        log,
        id: hubId(),
        url: config.failover.url,
        leaseMs: config.failover.leaseMs,
        renewMs: config.failover.renewMs,
        lead,
        stepDown: endTerm,
      })
    : soloLeadership(hubId(), () => url, lead);
  await leadership.start();

  const openSession = (socket: WebSocket, key: HubKey, protocol: WelcomeMessage['protocol']) => {
    // Led when the upgrade was checked, but the term may have ended since (an await in between).
    if (!term || !leadership.granting()) return void socket.close(NOT_LEADER_CLOSE, 'not leader');
    const session = new InstanceSession(socket, key, protocol, {
      scheduler: term.scheduler,
      signer,
      journal: term.journal,
      clock,
      log,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      granting: () => leadership.granting(),
      onHello: (fresh) => {
        for (const other of sessions) {
          if (other !== fresh && other.fleetId === fresh.fleetId && other.instanceId === fresh.instanceId)
            other.close(4002, 'superseded by a newer connection');
        }
      },
      onClose: (gone) => sessions.delete(gone),
    });
    sessions.add(session);
  };

  const reload = async () => {
    if (!options.configPath)
      throw createError('CONFLICT', 'the hub was started without a config file: nothing to reload');
    let fresh: HubServerConfig;
    try {
      fresh = loadHubConfig(options.configPath, env);
    } catch (err) {
      if (err instanceof ConfigError)
        throw createError('VALIDATION_ERROR', 'the config file is invalid; the running limits stay', {
          errors: [err.message],
        });
      throw err;
    }
    limits = rateLimits(fresh);
    unprovenShare = fresh.unprovenShare;
    term?.scheduler.setOpcoLimits(limits);
    term?.scheduler.setUnprovenShare(unprovenShare);
    log.info({ opcos: Object.keys(fresh.opcos), unprovenShare }, 'hub limits reloaded');
    return limits;
  };

  const app = createHubApp({
    keys,
    scheduler: () => term?.scheduler,
    leadership: () => leadership.view(),
    clock,
    log,
    registry: metrics.registry,
    adminKey: secrets.adminKey,
    reload,
    addresses,
    proxies,
    instances: () => [...sessions].flatMap((session) => session.view() ?? []),
    closeKey: (keyId) => {
      const affected = [...sessions].filter((session) => session.key.id === keyId);
      for (const session of affected) session.close(4003, 'hub key deleted');
      return affected.length;
    },
  });
  const handle = app.callback();
  // As the kernel's server: Koa answers its own errors (ctx.onerror), nothing to await here. Slow
  // clients are bounded as the API's are, at its defaults (kernel-config.schema.json `server`;
  // docs/operations.md, Slow clients): Node's timeouts, the slow-body watch and the connections
  // per address (an instance's WebSocket counts as one while it is open; none of the timeouts
  // applies to it once upgraded).
  const server = createGuardedServer(SERVER_LIMITS, (req, res) => void handle(req, res), {
    proxies,
    registry: metrics.registry,
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    void authorizeUpgrade(
      req,
      keys,
      () => closing,
      () => leadership,
      addresses,
      proxies.clientOf(req),
    )
      .then((key) => wss.handleUpgrade(req, socket, head, (ws) => openSession(ws, key, requestedProtocol(req.url))))
      .catch((err: unknown) => refuse(socket, asServiceError(err)));
  });

  server.listen(config.port, config.host);
  try {
    await once(server, 'listening');
  } catch (err) {
    await leadership.close(); // port taken: nothing may stay armed, the lease goes to the other hub
    endTerm('hub stopping');
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info(
    { url, store: store.kind, opcos: Object.keys(config.opcos), role: leadership.view().role },
    `opco-proxy hub listening on ${url}`,
  );

  return {
    url,
    port,
    async close() {
      if (closing) return;
      closing = true;
      for (const session of [...sessions]) session.close(1001, 'hub stopping');
      await leadership.close();
      endTerm('hub stopping');
      await waitForSockets(wss, CLOSE_GRACE_MS);
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      wss.close();
      await closed;
    },
  };
}

/** Reads and checks the config file, opens its store, starts the hub: `opco-proxy hub --config FILE`. */
export async function runHub(
  configPath: string,
  env: NodeJS.ProcessEnv = process.env,
  runOptions: { clock?: Clock; log?: Logger; flags?: ConfigFlags; drivers?: Drivers } = {},
): Promise<RunningHub> {
  const { flags, drivers, ...options } = runOptions;
  const config = loadHubConfig(configPath, env, flags);
  readHubSecrets(env); // a missing secret stops start-up before anything is opened
  const store = await openHubStore(config.store, drivers, options.clock);
  try {
    const hub = await startHub({ config, env, store, configPath, ...options });
    return {
      ...hub,
      close: async () => {
        await hub.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The hub's store through the application's drivers (issue 29): core ships the embedded one. */
export function openHubStore(
  config: HubStoreConfig,
  drivers: Drivers = {},
  clock: Clock = systemClock,
): Promise<Store> {
  return openStore(config, drivers, { clock });
}

/**
 * Resolves with the key of a valid `/ws?apiKey=` upgrade; rejects with the error to answer. A
 * key refused takes a token of its address; only once they are spent is it answered 429, so an
 * instance with a valid key is never turned away for what others sent from its address.
 */
async function authorizeUpgrade(
  req: IncomingMessage,
  keys: HubKeys,
  closing: () => boolean,
  leadership: () => Leadership,
  addresses: AddressLimits,
  address: string,
): Promise<HubKey> {
  const url = new URL(req.url ?? '/', 'http://hub');
  if (url.pathname !== '/ws') throw createError('NOT_FOUND', 'the hub accepts WebSocket connections at /ws');
  if (closing()) throw createError('UNAVAILABLE', 'the hub is stopping');
  if (!leadership().granting()) throw notLeader(leadership().view());
  const refused = (err: ServiceError): never => {
    addresses.checkBeforeAuth(address);
    addresses.failedAuth(address);
    throw err;
  };
  const apiKey = url.searchParams.get('apiKey');
  if (!apiKey) return refused(createError('HTTP_ERROR', 'the apiKey query parameter is required', { status: 401 }));
  const check = await keys.check(apiKey).catch((err: Error) => {
    throw createError('UNAVAILABLE', 'the hub cannot read its keys', { cause: err });
  });
  if (check.status === 'unknown') return refused(createError('HTTP_ERROR', 'unknown hub key', { status: 401 }));
  if (check.status === 'revoked')
    return refused(createError('HTTP_ERROR', 'this hub key was deleted', { status: 403 }));
  return check.key;
}

/**
 * A standby refuses instances with 503 before the upgrade, naming the leader it last saw: the
 * instance moves on to its next hub address (plugins/hub hub-connection.ts).
 */
function notLeader(view: LeadershipView): ServiceError {
  const leader = view.leader
    ? ` the leader is ${view.leader.id}${view.leader.url ? ` at ${view.leader.url}` : ''}`
    : ' no hub leads right now';
  return createError('UNAVAILABLE', `not leader: this hub stands by;${leader}`);
}

/** A refused upgrade gets a plain HTTP answer with the service's error body (and Retry-After on a 429). */
function refuse(socket: Duplex, err: ServiceError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(toErrorBody(err));
  const headers = Object.entries(err.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

async function waitForSockets(wss: WebSocketServer, graceMs: number): Promise<void> {
  const open = [...wss.clients];
  if (open.length === 0) return;
  const allClosed = Promise.all(open.filter((ws) => ws.readyState !== ws.CLOSED).map((ws) => once(ws, 'close')));
  let timer: NodeJS.Timeout | undefined;
  // Real time on purpose: this bounds how long sockets may linger, whatever clock the hub runs on.
  await Promise.race([allClosed, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  for (const ws of open) ws.terminate();
}
