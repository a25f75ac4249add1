/**
 * The hub's side of one instance connection: checks each message (protocol.ts), turns it into
 * scheduler calls, and sends grants back as signed, journalled JWTs. Whatever the peer sends, the
 * worst outcome is an `error` message back or the connection being closed.
 */
import type { WebSocket } from 'ws';
import type { Clock, Logger, Timer } from '@opco-proxy/core';
import {
  messageBytes,
  parseInstanceMessage,
  PROTOCOL_PARAM,
  PROTOCOL_VERSION,
  type AskMessage,
  type HelloMessage,
  type HubMessage,
  type WelcomeMessage,
  type InstanceMessage,
  type MetricsReport,
} from '@opco-proxy/plugin-hub';
import type { GrantJournal } from './grant-journal.js';
import type { GrantScheduler, IssuedGrant, WaitingAsk } from './grant-scheduler.js';
import type { GrantSigner } from './grant-token.js';
import type { HubKey } from './hub-keys.js';

export interface SessionDeps {
  scheduler: GrantScheduler;
  signer: GrantSigner;
  journal: GrantJournal;
  clock: Clock;
  log: Logger;
  heartbeatMs: number;
  /** Whether this hub still leads (failover): a grant is sent only if so, after it was journalled. */
  granting(): boolean;
  /** Called once the session has said hello: an older session of the same instance must go. */
  onHello(session: InstanceSession): void;
  onClose(session: InstanceSession): void;
}

export interface InstanceView {
  instanceId: string;
  name: string;
  fleetId: string;
  connectedAt: string;
  metrics: Record<string, MetricsReport & { reportedAt: string }>;
}

/** The protocol version an upgrade request asks for: `&protocol=2`, or 1 when it says nothing (protocol.ts). */
export function requestedProtocol(requestUrl: string | undefined): WelcomeMessage['protocol'] {
  const asked = new URL(requestUrl ?? '/', 'http://hub').searchParams.get(PROTOCOL_PARAM);
  return asked !== null && Number(asked) >= PROTOCOL_VERSION ? PROTOCOL_VERSION : 1;
}

/** An instance has this long to say hello after the upgrade. */
const HELLO_TIMEOUT_MS = 10_000;
/** Asks one instance may have waiting at once; beyond, asks are refused. */
const MAX_WAITING_ASKS = 10_000;
/** OpcoIds whose last window is kept for GET /admin/instances. */
const MAX_METRICS_OPCOS = 1000;
/** Malformed messages tolerated before the connection is closed. */
const MAX_BAD_MESSAGES = 20;

export class InstanceSession {
  instanceId: string | undefined;
  readonly connectedAt: Date;
  private readonly asks = new Map<string, WaitingAsk>();
  private metrics: InstanceView['metrics'] = {};
  private badMessages = 0;
  private alive = true;
  private closed = false;
  private timer: Timer | undefined;

  constructor(
    private readonly socket: WebSocket,
    readonly key: HubKey,
    /** The version the instance asked for in its socket URL: 1 when it did not (protocol.ts). */
    private readonly protocol: WelcomeMessage['protocol'],
    private readonly deps: SessionDeps,
  ) {
    this.connectedAt = deps.clock.date();
    socket.on('message', (data: Buffer) => this.receive(data));
    socket.on('pong', () => void (this.alive = true));
    socket.on('close', () => this.closeDown());
    socket.on('error', (err) =>
      deps.log.warn({ fleetId: key.fleetId, keyName: key.name, error: err.message }, 'hub connection error'),
    );
    this.timer = deps.clock.setTimeout(() => this.close(4001, 'no hello'), HELLO_TIMEOUT_MS);
  }

  get fleetId(): string {
    return this.key.fleetId;
  }

  view(): InstanceView | undefined {
    if (!this.instanceId) return undefined;
    return {
      instanceId: this.instanceId,
      name: this.key.name,
      fleetId: this.key.fleetId,
      connectedAt: this.connectedAt.toISOString(),
      metrics: this.metrics,
    };
  }

  /** Closes the connection (key deleted, instance superseded, hub closing). */
  close(code: number, reason: string): void {
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING)
      this.socket.close(code, reason);
    this.closeDown();
    // A peer that does not answer the close handshake is dropped.
    this.deps.clock.setTimeout(() => this.socket.terminate(), 1000);
  }

  private receive(data: Buffer): void {
    this.alive = true;
    const parsed = parseInstanceMessage(messageBytes(data));
    if (!parsed.ok) return this.reject(parsed.error);
    const message = parsed.message;
    // A closing connection may still carry the end of a call: that is worth hearing, nothing else.
    if (this.closed && message.type !== 'done') return;
    if (!this.instanceId && message.type !== 'hello') return this.reject('the first message must be hello');
    this.dispatch(message);
  }

  private dispatch(message: InstanceMessage): void {
    const { scheduler } = this.deps;
    switch (message.type) {
      case 'hello':
        return this.hello(message);
      case 'ask':
        return this.ask(message);
      case 'cancel': {
        const ask = this.asks.get(message.askId);
        if (ask) scheduler.cancel(this.fleetId, ask);
        this.asks.delete(message.askId);
        return;
      }
      case 'done':
        scheduler.done(this.fleetId, this.instanceId!, message.grantId, message.outcome);
        return;
      case 'metrics': {
        scheduler.observe(this.fleetId, this.instanceId!, message.windows);
        const reportedAt = this.deps.clock.date().toISOString();
        for (const [opcoId, window] of Object.entries(message.windows)) {
          if (Object.hasOwn(this.metrics, opcoId) || Object.keys(this.metrics).length < MAX_METRICS_OPCOS)
            this.metrics[opcoId] = { ...window, reportedAt };
        }
        return;
      }
    }
  }

  private hello(message: HelloMessage): void {
    if (this.instanceId) return this.reject('hello was already received');
    this.timer?.cancel();
    this.instanceId = message.instanceId;
    this.deps.onHello(this);
    this.deps.scheduler.connect(this.fleetId, message.instanceId, message);
    // An instance of the previous version did not ask for protocol 2 and reads only tenantId.
    const fleet = this.protocol === PROTOCOL_VERSION ? { fleetId: this.fleetId } : { tenantId: this.fleetId };
    this.send({
      type: 'welcome',
      protocol: this.protocol,
      instanceId: message.instanceId,
      ...fleet,
      heartbeatMs: this.deps.heartbeatMs,
    });
    this.deps.log.info(
      {
        fleetId: this.fleetId,
        keyName: this.key.name,
        instanceId: message.instanceId,
        protocol: this.protocol,
        reported: message.usage.length,
      },
      'instance connected to the hub',
    );
    this.heartbeat();
  }

  private ask(message: AskMessage): void {
    if (this.asks.has(message.askId))
      return this.send({ type: 'refused', askId: message.askId, message: 'askId is already waiting' });
    if (this.asks.size >= MAX_WAITING_ASKS)
      return this.send({ type: 'refused', askId: message.askId, message: 'too many waiting asks' });
    const { type: _type, ...input } = message;
    const ask = this.deps.scheduler.ask(
      this.fleetId,
      { ...input, instanceId: this.instanceId! },
      (grant) => void this.deliver(grant),
    );
    if (!ask)
      return this.send({
        type: 'refused',
        askId: message.askId,
        message: `the hub has no budget for ${message.opcoId}`,
      });
    if (!ask.settled) this.asks.set(message.askId, ask);
  }

  /**
   * Sign, journal, send. A grant whose connection is already gone was never seen by the
   * instance and frees its slot; one whose sending failed stays counted (it may have left).
   */
  private async deliver(grant: IssuedGrant): Promise<void> {
    this.asks.delete(grant.askId);
    const { scheduler, journal, log, clock } = this.deps;
    try {
      const token = await this.deps.signer.sign(grant);
      await journal
        .record(grant)
        .catch((err: Error) =>
          log.error({ error: err.message }, 'grant journal write failed; a hub restart may not see this grant'),
        );
      // Journalled, then checked: a grant sent was written before this hub's lease ended, so the
      // hub that takes the lease next finds it in the journal (hub-leadership.ts).
      if (this.closed || this.socket.readyState !== this.socket.OPEN || !this.deps.granting()) {
        scheduler.done(this.fleetId, grant.instanceId, grant.grantId, 'unused');
        return;
      }
      this.send({
        type: 'grant',
        askId: grant.askId,
        grantId: grant.grantId,
        token,
        expiresInMs: grant.exp * 1000 - clock.now(),
      });
    } catch (err) {
      log.error({ error: (err as Error).message }, 'grant could not be issued');
      scheduler.done(this.fleetId, grant.instanceId, grant.grantId, 'unused');
    }
  }

  private reject(problem: string): void {
    this.badMessages += 1;
    this.deps.log.warn(
      { fleetId: this.fleetId, keyName: this.key.name, instanceId: this.instanceId, problem },
      'hub message refused',
    );
    if (this.badMessages > MAX_BAD_MESSAGES) return this.close(1008, 'too many invalid messages');
    this.send({ type: 'error', message: problem });
  }

  private send(message: HubMessage): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** A ping every heartbeatMs; an instance that did not answer the last one is dropped. */
  private heartbeat(): void {
    this.timer = this.deps.clock.setTimeout(() => {
      if (this.closed) return;
      if (!this.alive) return void this.socket.terminate();
      this.alive = false;
      this.socket.ping();
      this.heartbeat();
    }, this.deps.heartbeatMs);
  }

  /** Once, whatever closed it: waiting asks are dropped, grants in flight stay counted. */
  private closeDown(): void {
    if (this.closed) return;
    this.closed = true;
    this.timer?.cancel();
    for (const ask of this.asks.values()) this.deps.scheduler.cancel(this.fleetId, ask);
    this.asks.clear();
    if (this.instanceId) this.deps.scheduler.disconnect(this.fleetId, this.instanceId);
    this.deps.onClose(this);
  }
}
