/**
 * The CFAs' side of the public edge (issue 37), against the real service as a process with the
 * production edge defaults (no address limit raised) and the sandbox profile's 60 calls a minute:
 * a sandbox upstream that knows only the CFA keys given, clients on 127.0.0.1 (a publisher's
 * server) and strangers on 127.0.0.2. Each scene has its own process, sandbox and embedded store.
 */
import { Agent, request } from 'undici';
import { startSandbox, type Sandbox } from '@opco-proxy/adapter-sandbox';
import { runCli, stopCli, writeConfig, type CliProcess } from './processes.js';
import { TEST_MASTER_KEY } from './harness.js';

export const STRANGER_ADDRESS = '127.0.0.2';

export interface ClientReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface ClientScene {
  url: string;
  sandbox: Sandbox;
  process: CliProcess;
  /** One request as a client would send it; `from` 127.0.0.2 plays the stranger's address. */
  send(
    method: string,
    path: string,
    key: string,
    options?: { body?: unknown; from?: 'stranger' },
  ): Promise<ClientReply>;
  /** Upstream calls made with this key so far. */
  upstreamCalls(key: string): number;
  close(): Promise<void>;
}

export interface ClientSceneOptions {
  acceptedKeys: string[];
  /** More config keys (store, queue, tenantKeys, ...). */
  config?: Record<string, unknown>;
  /** Keys of the sandbox opco's entry (rateLimit, ...). */
  opco?: Record<string, unknown>;
  /** Another scene's sandbox, shared (it is closed by that scene). */
  upstream?: Sandbox;
}

export async function startClientScene(options: ClientSceneOptions): Promise<ClientScene> {
  const sandbox = options.upstream ?? (await startSandbox({ acceptedKeys: options.acceptedKeys }));
  const config = {
    mode: 'development',
    host: '127.0.0.1',
    port: 0,
    shutdownGraceMs: 2000,
    plugins: ['jobs', 'webhooks', 'sync'],
    opcos: {
      sandbox: {
        adapter: 'sandbox',
        baseUrl: sandbox.url,
        tokenUrl: sandbox.tokenUrl,
        clientId: 'clients',
        clientSecretEnv: 'CLIENTS_SANDBOX_SECRET',
        ...options.opco,
      },
    },
    ...options.config,
  };
  const child = runCli(['serve', '--config', writeConfig(config)], {
    OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY,
    CLIENTS_SANDBOX_SECRET: 'test-secret',
  });
  let url: string;
  try {
    url = await child.url;
  } catch (err) {
    if (!options.upstream) await sandbox.close();
    throw err;
  }
  const publisher = new Agent({ connections: 64 });
  const stranger = new Agent({ localAddress: STRANGER_ADDRESS, connections: 64 });
  return {
    url,
    sandbox,
    process: child,
    async send(method, path, key, { body, from } = {}) {
      const headers: Record<string, string> = { 'x-api-key': key };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const answer = await request(url + path, {
        method: method as 'GET',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: from === 'stranger' ? stranger : publisher,
        headersTimeout: 60_000,
      });
      const text = await answer.body.text();
      return { status: answer.statusCode, headers: answer.headers, body: text ? JSON.parse(text) : undefined };
    },
    upstreamCalls: (key) => sandbox.received.filter((call) => call.headers['x-api-key'] === key).length,
    async close() {
      await stopCli(child.child);
      await Promise.all([publisher.close(), stranger.close()]);
      if (!options.upstream) await sandbox.close();
    },
  };
}

/** How many answers had each status: `{"202": 100}`. */
export function statusCounts(replies: Array<{ status: number }>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of replies) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
