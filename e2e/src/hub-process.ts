/**
 * The hub as a real process (`opco-proxy hub --config FILE`, D28), its admin API (D26) and its
 * WebSocket door, for end-to-end tests and the hub benchmark. The secrets below are test values:
 * the tests look for them in every log line and stored document.
 */
import { writeFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { runCli, stopCli, writeConfig, type CliProcess } from './processes.js';

export const HUB_SECRET = '5e'.repeat(32);
export const HUB_ADMIN_KEY = 'hub-admin-key-for-e2e-tests-0123456789';
export const HUB_ENV = { OPCO_PROXY_HUB_SECRET: HUB_SECRET, OPCO_PROXY_HUB_ADMIN_KEY: HUB_ADMIN_KEY };

export interface RateLimit {
  limit: number;
  windowMs: number;
}

export interface HubProcessOptions {
  opcos: Record<string, RateLimit>;
  /** The hub's own store: keys and grant journal (default: embedded in memory). */
  store?: Record<string, unknown>;
  adaptive?: Record<string, number>;
  /** Per-address limits of failed authentications (default: the hub's, core's). */
  addressRateLimit?: Record<string, number>;
  logLevel?: string;
  /** More keys of the hub's config file (unprovenShare, addressRateLimit, ...). */
  extra?: Record<string, unknown>;
}

export interface AdminReply {
  status: number;
  body: any;
  headers: Headers;
}

export interface HubProcess {
  /** `http://127.0.0.1:PORT`; instances use it as `hub.url`. */
  url: string;
  port: number;
  configFile: string;
  process: CliProcess;
  /** Every line printed by every hub process started from this handle (restarts included). */
  output(): string;
  admin(method: string, path: string, body?: unknown, authorization?: string | null): Promise<AdminReply>;
  /** Creates a hub key through the admin API: `{id, fleetId, name, key, createdAt}`. */
  key(fleetId: string, name: string): Promise<{ id: string; key: string; fleetId: string; name: string }>;
  /** Rewrites the config file (for POST /admin/reload). */
  rewrite(options: HubProcessOptions): void;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the hub again on the same port and file (a store with a path keeps its keys). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function fileContent(options: HubProcessOptions): Record<string, unknown> {
  return {
    host: '127.0.0.1',
    port: 0,
    store: options.store ?? { type: 'embedded' },
    logLevel: options.logLevel ?? 'debug',
    opcos: Object.fromEntries(Object.entries(options.opcos).map(([opcoId, rateLimit]) => [opcoId, { rateLimit }])),
    ...(options.adaptive ? { adaptive: options.adaptive } : {}),
    ...(options.addressRateLimit ? { addressRateLimit: options.addressRateLimit } : {}),
    ...options.extra,
  };
}

export async function startHubProcess(options: HubProcessOptions): Promise<HubProcess> {
  const configFile = writeConfig(fileContent(options));
  let earlier = '';
  let current = runCli(['hub', '--config', configFile], HUB_ENV);
  const url = await current.url;
  const port = Number(new URL(url).port);
  const admin: HubProcess['admin'] = async (method, path, body, authorization = `Bearer ${HUB_ADMIN_KEY}`) => {
    const headers: Record<string, string> = {};
    if (authorization !== null) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // GET /metrics is text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  const hub: HubProcess = {
    url,
    port,
    configFile,
    get process() {
      return current;
    },
    output: () => earlier + current.output(),
    admin,
    async key(fleetId, name) {
      const created = await admin('POST', '/admin/keys', { fleetId, name });
      if (created.status !== 201)
        throw new Error(`hub key not created: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body;
    },
    rewrite(next) {
      writeFileSync(configFile, JSON.stringify({ ...fileContent(next), port }));
    },
    async kill(signal = 'SIGKILL') {
      await stopCli(current.child, signal);
    },
    async restart() {
      earlier += current.output();
      current = runCli(['hub', '--config', configFile], { ...HUB_ENV, PORT: String(port) });
      await current.url;
    },
    async stop() {
      await stopCli(current.child);
    },
  };
  return hub;
}

/** What the hub answers to a WebSocket upgrade at `/ws?apiKey=`: 101, or the status and body it refused with. */
export function tryUpgrade(hubUrl: string, apiKey: string | undefined): Promise<{ status: number; body?: any }> {
  const target = `${hubUrl.replace(/^http/, 'ws')}/ws${apiKey === undefined ? '' : `?apiKey=${encodeURIComponent(apiKey)}`}`;
  return new Promise((resolve) => {
    const ws = new WebSocket(target);
    ws.on('unexpected-response', (req, res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        req.destroy();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.on('error', () => undefined);
  });
}
