/**
 * An instance's one WebSocket to its hub (`${url}/ws?apiKey=…`): hello on every (re)connection,
 * periodic metrics reports, a watchdog on the hub's pings, and reconnection with exponential
 * backoff capped at 5 s between tries. Given the addresses of two hubs (failover), it tries them
 * in turn: the standby refuses with 503, so the instance ends up on the leader, and when the leader
 * goes it tries the other one next. The backoff grows by round of every address, not by address.
 * It emits `state` ('connecting' | 'connected' | 'disconnected' | 'closed') and passes the hub's
 * grant/refused messages on.
 *
 * 'connected' starts the moment the hello is sent: the hub reads the hello before anything sent
 * after it, so from then on every ask is counted after the usage the hello reported.
 */
import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import type { Clock, Logger, Timer } from '@opco-proxy/core';
import {
  HELLO_PROTOCOL,
  messageBytes,
  parseHubMessage,
  PROTOCOL_PARAM,
  PROTOCOL_VERSION,
  MAX_MESSAGE_BYTES,
  type HubMessage,
  type InstanceMessage,
  type MetricsReport,
  type RateLimit,
  type UsageEntry,
} from '../protocol.js';

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'closed';

export interface HubConnectionOptions {
  /** The hub's base address, `ws://hub.internal:8090` (http:// is accepted and turned into ws://), or those of two hubs. */
  url: string | string[];
  apiKey: string;
  instanceId: string;
  expectedInstances: number;
  clock: Clock;
  log: Logger;
  /** Between two metrics reports (default 5 s). */
  reportIntervalMs?: number;
  /** Longest pause between two connection tries (default and maximum 5 s, D30). */
  maxBackoffMs?: number;
  /** What the hello reports: known limits and the calls of the last window. */
  usage(): { limits: Record<string, RateLimit>; usage: UsageEntry[]; complete: boolean };
  /** The 60-second windows per opcoId (SPEC 1.1 step 9). */
  metrics(): Record<string, MetricsReport>;
}

const FIRST_BACKOFF_MS = 100;
/** Between rounds of several addresses one of which answered 503 (a standby): one of them is about to lead. */
const STANDBY_RETRY_MS = 500;
const MAX_BACKOFF_MS = 5000;
const HANDSHAKE_TIMEOUT_MS = 5000;
/** Until the welcome says otherwise. */
const DEFAULT_HEARTBEAT_MS = 10_000;

export class HubConnection extends EventEmitter {
  private current: ConnectionState = 'disconnected';
  private ws: WebSocket | undefined;
  private attempt = 0;
  private readonly urls: string[];
  /** The address of the current or next connection. */
  private index = 0;
  private closed = false;
  private lastHeard = 0;
  private heartbeatMs = DEFAULT_HEARTBEAT_MS;
  private lastError: string | undefined;
  /** A hub of this round of addresses answered 503: alive, standing by (failover). */
  private standbySeen = false;
  private retry: Timer | undefined;
  private report: Timer | undefined;
  private watchdog: Timer | undefined;

  constructor(private readonly options: HubConnectionOptions) {
    super();
    this.urls = Array.isArray(options.url) ? [...options.url] : [options.url];
  }

  /** The hub address in use, or tried next. */
  get url(): string {
    return this.urls[this.index];
  }

  get state(): ConnectionState {
    return this.current;
  }

  start(): void {
    if (!this.closed && !this.ws && !this.retry) this.connect();
  }

  /** False when the message could not be handed to an open socket. */
  send(message: InstanceMessage): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(message));
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    this.retry?.cancel();
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const gone = new Promise((resolve) => ws.once('close', resolve));
      ws.close(1000, 'instance stopping');
      const timer = this.options.clock.setTimeout(() => ws.terminate(), 1000); // a hub that does not answer the close
      await gone;
      timer.cancel();
    }
    this.setState('closed');
  }

  private connect(): void {
    this.retry = undefined;
    this.setState('connecting');
    let ws: WebSocket;
    try {
      ws = new WebSocket(socketUrl(this.url, this.options.apiKey), {
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        maxPayload: MAX_MESSAGE_BYTES,
      });
    } catch {
      // The error message would show the URL, and with it the key.
      this.options.log.error('hub.url is not a valid WebSocket address');
      return this.lost();
    }
    this.ws = ws;
    ws.on('open', () => this.opened(ws));
    ws.on('message', (data: Buffer) => this.received(data));
    ws.on('ping', () => void (this.lastHeard = this.options.clock.now()));
    ws.on('error', (err) => this.failed(err.message));
    ws.on('close', () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.lost();
    });
  }

  /** The first failure of a kind is a warning; the same one again at every retry is only debug. */
  private failed(error: string): void {
    if (this.closed) return;
    if (/ 503$/.test(error)) this.standbySeen = true;
    const level = error === this.lastError ? 'debug' : 'warn';
    this.lastError = error;
    this.options.log[level]({ error, attempt: this.attempt, hub: this.url }, 'hub connection failed');
  }

  private opened(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.attempt = 0;
    this.lastError = undefined;
    this.lastHeard = this.options.clock.now();
    const { limits, usage, complete } = this.options.usage();
    this.send({
      type: 'hello',
      protocol: HELLO_PROTOCOL,
      instanceId: this.options.instanceId,
      expectedInstances: this.options.expectedInstances,
      limits,
      usage,
      complete,
    });
    this.setState('connected');
    this.armReport();
    this.armWatchdog();
  }

  private received(data: Buffer): void {
    this.lastHeard = this.options.clock.now();
    const parsed = parseHubMessage(messageBytes(data));
    if (!parsed.ok) return void this.options.log.warn({ problem: parsed.error }, 'hub message ignored');
    const message: HubMessage = parsed.message;
    if (message.type === 'welcome') {
      this.heartbeatMs = message.heartbeatMs;
      // A hub of protocol 1 names the fleet tenantId (protocol.ts).
      this.options.log.info(
        {
          instanceId: message.instanceId,
          fleetId: message.fleetId ?? message.tenantId,
          protocol: message.protocol,
          hub: this.url,
        },
        'connected to the hub',
      );
      return;
    }
    if (message.type === 'error')
      return void this.options.log.warn({ problem: message.message }, 'the hub reported an error');
    this.emit('message', message);
  }

  private lost(): void {
    this.stopTimers();
    if (this.closed) return;
    this.setState('disconnected');
    // The next address at once (a standby, or the hub that took over); a new round after the backoff.
    this.index = (this.index + 1) % this.urls.length;
    let delay = FIRST_BACKOFF_MS;
    if (this.index === 0) {
      delay = Math.min(
        this.options.maxBackoffMs ?? MAX_BACKOFF_MS,
        MAX_BACKOFF_MS,
        FIRST_BACKOFF_MS * 2 ** this.attempt,
      );
      if (this.standbySeen && this.urls.length > 1) delay = Math.min(delay, STANDBY_RETRY_MS);
      this.standbySeen = false;
      this.attempt = Math.min(this.attempt + 1, 16);
    }
    // Jitter in [delay/2, delay]: instances of a restarted hub do not all knock at once.
    this.retry = this.options.clock.setTimeout(() => this.connect(), delay / 2 + Math.random() * (delay / 2));
  }

  private armReport(): void {
    this.report = this.options.clock.setTimeout(() => {
      const windows = this.options.metrics();
      if (Object.keys(windows).length > 0) this.send({ type: 'metrics', windows });
      this.armReport();
    }, this.options.reportIntervalMs ?? 5000);
  }

  /** A hub silent for three heartbeats is gone (half-open TCP): drop the socket and reconnect. */
  private armWatchdog(): void {
    this.watchdog = this.options.clock.setTimeout(() => {
      if (this.options.clock.now() - this.lastHeard > 3 * this.heartbeatMs) return void this.ws?.terminate();
      this.armWatchdog();
    }, this.heartbeatMs);
  }

  private stopTimers(): void {
    this.report?.cancel();
    this.watchdog?.cancel();
    this.report = this.watchdog = undefined;
  }

  private setState(state: ConnectionState): void {
    if (state === this.current) return;
    const previous = this.current;
    this.current = state;
    this.emit('state', state, previous);
  }
}

function socketUrl(base: string, apiKey: string): string {
  const url = new URL(base.replace(/^http(s?):\/\//, 'ws$1://'));
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws`;
  url.search = '';
  url.searchParams.set('apiKey', apiKey);
  url.searchParams.set(PROTOCOL_PARAM, String(PROTOCOL_VERSION));
  return url.toString();
}
