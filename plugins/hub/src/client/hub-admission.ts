/**
 * Pipeline step 4 with a hub (SPEC 1.1, D29, D30): the AdmissionProvider named 'hub'.
 *
 * Connected: every upstream call asks the hub and waits for its own grant, sent upstream as
 * `Svc-Hub-Token: <jwt>`; releasing the lease tells the hub the call is done. A synchronous ask
 * (a client GET) waits at most `maxWaitMs` and is then cancelled and refused with 429
 * RATE_LIMITED; background work waits as long as it takes, unless `request.cancelled` says stop.
 *
 * Not connected (hub down, never reached, key refused): the local fallback (local-fallback.ts),
 * `Svc-Hub-Token: DISCONNECTED`, waits and never rejects. Asks waiting for a grant when the
 * connection drops move to it at once; asks waiting locally when the hub is back go to the hub.
 */
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import {
  ConfigError,
  createError,
  createLogger,
  MetricsWindow,
  randomHex,
  systemClock,
  type AdmissionLease,
  type AdmissionProvider,
  type AdmissionRequest,
  type AdmissionState,
  type Clock,
  type Logger,
  type UpstreamOutcome,
} from '@opco-proxy/core';
import {
  prepareProtocol,
  type GrantMessage,
  type MetricsReport,
  type RateLimit,
  type RefusedMessage,
} from '../protocol.js';
import { HubConnection, type ConnectionState } from './hub-connection.js';
import { createInstanceMetrics, type InstanceMetrics } from './instance-metrics.js';
import { LocalFallback, Rerouted } from './local-fallback.js';
import { UsageLedger } from './usage-ledger.js';
import type { HubPluginConfig } from '../generated/config.js';

export interface HubAdmissionOptions {
  /** The instance config's `hub` section (D28), as checked against plugins/hub/config.schema.json, defaults filled in. */
  hub: HubPluginConfig;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  log?: Logger;
  /** Where the instance metrics are registered (the kernel's registry); a new one by default. */
  registry?: Registry;
  /** Stable for the life of the process; default `<host>-<pid>-<random>`. */
  instanceId?: string;
  /** Between two metrics reports to the hub (default 5000). */
  reportIntervalMs?: number;
  /** The 60 s windows per opcoId to report; default: measured from the leases' outcomes. */
  metrics?: () => Record<string, MetricsReport>;
}

export const DISCONNECTED_TOKEN = 'DISCONNECTED';
const TOKEN_HEADER = 'Svc-Hub-Token';
const CANCEL_POLL_MS = 250;

interface PendingAsk {
  opcoId: string;
  proven: boolean;
  granted(message: GrantMessage): void;
  /** The hub refused the ask, or the instance is stopping. */
  failed(err: Error): void;
  /** The connection dropped: the ask goes to the local fallback. */
  dropped(): void;
}

/** Reads the key from the environment, connects, and returns the provider, serving at once. */
export function createHubAdmission(options: HubAdmissionOptions): HubAdmission {
  const admission = configureHubAdmission(options);
  admission.start();
  return admission;
}

/**
 * Checks the config and builds the provider without connecting: a kernel provides it while its
 * plugins register and connects once ready, so a start-up that fails later (a second admission
 * provider, a bad plugin) leaves no socket or reconnection timer behind.
 */
export function configureHubAdmission(options: HubAdmissionOptions): HubAdmission {
  const { hub } = options;
  const env = options.env ?? process.env;
  const apiKey = env[hub.apiKeyEnv];
  if (!apiKey)
    throw new ConfigError(`invalid configuration: hub.apiKeyEnv: environment variable ${hub.apiKeyEnv} is not set`);
  const expectedInstances = hub.expectedInstances;
  const maxWaitMs = hub.maxWaitMs;
  return new HubAdmission({ ...options, apiKey, expectedInstances, maxWaitMs });
}

export class HubAdmission implements AdmissionProvider {
  readonly name = 'hub';
  readonly instanceId: string;
  readonly connection: HubConnection;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly maxWaitMs: number;
  private readonly expectedInstances: number;
  private readonly ledger: UsageLedger;
  private readonly fallback: LocalFallback;
  private readonly window = new MetricsWindow();
  private readonly metrics: InstanceMetrics;
  private readonly limits = new Map<string, RateLimit>();
  private readonly pending = new Map<string, PendingAsk>();
  private closed = false;

  constructor(options: HubAdmissionOptions & { apiKey: string; expectedInstances: number; maxWaitMs: number }) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? createLogger();
    this.maxWaitMs = options.maxWaitMs;
    this.expectedInstances = options.expectedInstances;
    this.instanceId = options.instanceId ?? defaultInstanceId();
    this.ledger = new UsageLedger(this.clock);
    this.fallback = new LocalFallback(this.clock, options.expectedInstances, this.ledger, cancelledError);
    this.metrics = createInstanceMetrics(options.registry);
    this.connection = new HubConnection({
      url: options.hub.url,
      apiKey: options.apiKey,
      instanceId: this.instanceId,
      expectedInstances: options.expectedInstances,
      clock: this.clock,
      log: this.log,
      reportIntervalMs: options.reportIntervalMs,
      usage: () => ({ limits: Object.fromEntries(this.limits), ...this.ledger.report() }),
      metrics: options.metrics ?? (() => this.windows()),
    });
    this.connection.on('state', (state: ConnectionState, previous: ConnectionState) =>
      this.stateChanged(state, previous),
    );
    this.connection.on('message', (message: GrantMessage | RefusedMessage) => this.hubMessage(message));
    this.metrics.state(this.connection.state);
  }

  get state(): ConnectionState {
    return this.connection.state;
  }

  start(): void {
    prepareProtocol();
    this.connection.start();
  }

  async admit(request: AdmissionRequest): Promise<AdmissionLease> {
    if (this.closed) throw stoppingError();
    this.limits.set(request.opcoId, { ...request.rateLimit });
    // Clock timers never keep the process alive (core's LocalBucket wakes its waiters with one):
    // an awaited admission must, as an awaited sleep does.
    const hold = setInterval(() => undefined, 1 << 30);
    try {
      return await this.admitOnce(request);
    } finally {
      clearInterval(hold);
    }
  }

  private async admitOnce(request: AdmissionRequest): Promise<AdmissionLease> {
    const askedAt = this.clock.now();
    for (;;) {
      if (this.connection.state === 'connected') {
        const lease = await this.viaHub(request, askedAt);
        if (lease) return lease;
      }
      // Dropped while waiting for a grant, or no hub: the local fallback, left again if the hub comes back.
      if (this.closed) throw stoppingError();
      const lease = await this.viaLocal(request, askedAt);
      if (lease) return lease;
    }
  }

  /**
   * This instance's side of the budget (GET /admin/upstreams): its connection, its calls, its
   * fallback. Of the unproven slice it knows its local bucket's part and count, and the asks it
   * has waiting; how much of the slice the hub has granted is the hub's (its /admin/limits).
   */
  describe(opco: { id: string; rateLimit: RateLimit; unprovenLimit: number }): AdmissionState {
    const state = this.connection.state;
    const local = state !== 'connected';
    const opensAt = this.fallback.opensAt(opco.id, opco.rateLimit.windowMs);
    const asks = [...this.pending.values()].filter((ask) => ask.opcoId === opco.id);
    const unproven = this.fallback.unproven(opco.id);
    return {
      provider: this.name,
      used: this.ledger.counted(opco.id, opco.rateLimit.windowMs),
      waiting: asks.length + this.fallback.waiting(opco.id),
      unproven: {
        limit: local
          ? LocalFallback.sliceShare(opco.rateLimit, opco.unprovenLimit, this.expectedInstances)
          : opco.unprovenLimit,
        used: local ? unproven.used : null,
        waiting: asks.filter((ask) => !ask.proven).length + unproven.waiting,
      },
      hub: {
        state,
        instanceId: this.instanceId,
        mode: local ? 'local' : 'hub',
        localShare: LocalFallback.share(opco.rateLimit, this.expectedInstances),
        localOpensAt: opensAt > this.clock.now() ? new Date(opensAt).toISOString() : null,
      },
    };
  }

  /** Asks still waiting fail with UNAVAILABLE; the connection closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const ask of [...this.pending.values()]) ask.failed(stoppingError());
    this.fallback.close(stoppingError());
    await this.connection.close();
  }

  /** Resolves with a lease, or undefined when the connection dropped before the grant came. */
  private viaHub(request: AdmissionRequest, askedAt: number): Promise<AdmissionLease | undefined> {
    return new Promise((resolve, reject) => {
      const askId = randomHex(8);
      let settled = false;
      const settle = () => {
        settled = true;
        this.pending.delete(askId);
        deadline?.cancel();
      };
      const giveUp = (err: Error) => {
        settle();
        this.connection.send({ type: 'cancel', askId });
        reject(err);
      };
      this.pending.set(askId, {
        opcoId: request.opcoId,
        proven: request.proven,
        granted: (message) => (settle(), resolve(this.hubLease(request, message, askedAt))),
        failed: (err) => (settle(), reject(err)),
        dropped: () => (settle(), resolve(undefined)),
      });
      const deadline = request.synchronous
        ? this.clock.setTimeout(() => giveUp(rateLimited(request)), this.maxWaitMs)
        : undefined;
      const { opcoId, method, route, priority, rateLimit } = request;
      // `proven` only when false: a proven ask is then also one a hub of the previous version takes (protocol.ts).
      const lane = request.proven ? {} : { proven: false };
      const sent = this.connection.send({
        type: 'ask',
        askId,
        opcoId,
        method,
        route,
        priority,
        tenant: request.tenant || '-',
        rateLimit,
        ...lane,
      });
      if (!sent) return this.pending.get(askId)?.dropped();
      if (request.cancelled)
        void this.watchCancellation(
          request,
          () => settled,
          () => giveUp(cancelledError()),
        );
    });
  }

  private hubLease(request: AdmissionRequest, grant: GrantMessage, askedAt: number): AdmissionLease {
    const entry = this.ledger.start(request.opcoId, grant.grantId, 'grant', request.rateLimit.windowMs);
    this.metrics.waited(request.opcoId, 'hub', this.clock.now() - askedAt);
    return this.lease(
      grant.token,
      (outcome) => {
        this.ledger.end(entry);
        this.connection.send({ type: 'done', grantId: grant.grantId, outcome: 'used', ...outcomeFields(outcome) });
      },
      request,
    );
  }

  /** Resolves with a lease, or undefined when the hub came back while the ask waited. */
  private async viaLocal(request: AdmissionRequest, askedAt: number): Promise<AdmissionLease | undefined> {
    let release: () => void;
    try {
      release = await this.fallback.acquire(request);
    } catch (err) {
      if (err instanceof Rerouted) return undefined;
      throw err;
    }
    // The bucket said yes, but the hub may have come back before this line ran: its hello then
    // reported the ledger without this call, and the hub would grant its slot again. Ask the hub.
    if (this.connection.state === 'connected') {
      release();
      return undefined;
    }
    const entry = this.ledger.start(request.opcoId, `local-${randomHex(8)}`, 'local', request.rateLimit.windowMs);
    this.metrics.waited(request.opcoId, 'local', this.clock.now() - askedAt);
    return this.lease(
      DISCONNECTED_TOKEN,
      (outcome) => {
        release();
        this.ledger.end(entry);
        // A hub that heard of this call in a hello holds a slot for it until told it ended.
        this.connection.send({ type: 'done', grantId: entry.id, outcome: 'used', ...outcomeFields(outcome) });
      },
      request,
    );
  }

  private lease(token: string, ended: (outcome: UpstreamOutcome) => void, request: AdmissionRequest): AdmissionLease {
    let released = false;
    return {
      headers: { [TOKEN_HEADER]: token },
      release: (outcome) => {
        if (released) return;
        released = true;
        this.window.record(
          request.opcoId,
          {
            route: request.route,
            latencyMs: outcome.latencyMs,
            status: outcome.status,
            error: outcome.status === 0 || outcome.status >= 500,
            warnings: 0,
          },
          this.clock.now(),
        );
        ended(outcome);
      },
    };
  }

  private hubMessage(message: GrantMessage | RefusedMessage): void {
    const ask = this.pending.get(message.askId);
    if (message.type === 'refused')
      return ask?.failed(createError('UNAVAILABLE', `the hub refused the call: ${message.message}`));
    if (ask) return ask.granted(message);
    // The ask was given up (timeout, cancelled, moved to the local bucket): give the slot back.
    this.connection.send({ type: 'done', grantId: message.grantId, outcome: 'unused' });
  }

  private stateChanged(state: ConnectionState, previous: ConnectionState): void {
    this.metrics.state(state);
    if (state === 'connected') return this.fallback.hubBack();
    if (previous === 'connected') {
      this.log.warn({ state }, 'hub connection lost: upstream calls use the local bucket');
      this.fallback.hubLost();
      for (const ask of [...this.pending.values()]) ask.dropped();
    }
  }

  private async watchCancellation(
    request: AdmissionRequest,
    settled: () => boolean,
    cancel: () => void,
  ): Promise<void> {
    while (!settled()) {
      await this.clock.sleep(CANCEL_POLL_MS);
      if (settled()) return;
      const stop = await Promise.resolve()
        .then(request.cancelled)
        .catch(() => false);
      if (stop && !settled()) return cancel();
    }
  }

  private windows(): Record<string, MetricsReport> {
    const now = this.clock.now();
    const windows: Record<string, MetricsReport> = {};
    for (const opcoId of this.limits.keys()) {
      const { requests, errors, rateLimited, averageLatencyMs } = this.window.snapshot(opcoId, now);
      windows[opcoId] = { requests, errors, rateLimited, averageLatencyMs };
    }
    return windows;
  }
}

function stoppingError(): Error {
  return createError('UNAVAILABLE', 'the instance is stopping');
}

function cancelledError(): Error {
  return createError('UNAVAILABLE', 'the work was cancelled while waiting for upstream budget');
}

function rateLimited(request: AdmissionRequest): Error {
  // A hint: the average spacing of calls under the limit, at least one second.
  const seconds = Math.max(1, Math.ceil(request.rateLimit.windowMs / request.rateLimit.limit / 1000));
  return createError('RATE_LIMITED', `no upstream budget for ${request.opcoId} came from the hub in time`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/** The outcome as the protocol accepts it (a status of 0..999, a finite latency). */
function outcomeFields(outcome: UpstreamOutcome): { status?: number; latencyMs?: number } {
  const fields: { status?: number; latencyMs?: number } = {};
  if (Number.isInteger(outcome.status) && outcome.status >= 0 && outcome.status <= 999) fields.status = outcome.status;
  if (Number.isFinite(outcome.latencyMs) && outcome.latencyMs >= 0) fields.latencyMs = Math.min(outcome.latencyMs, 1e7);
  return fields;
}

function defaultInstanceId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 80) || 'instance';
  return `${host}-${process.pid}-${randomHex(3)}`;
}
