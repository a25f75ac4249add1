/**
 * Starts the real service on a free port against a real sandbox upstream, and speaks HTTP to it.
 */
import { Writable } from 'node:stream';
import { BUNDLED, CONFIG_PARTS } from '@opco-proxy/server';
import {
  createLogger,
  type Clock,
  type DomainEvent,
  type HostResolver,
  type Plugin,
  type Queue,
  type Store,
} from '@opco-proxy/core';
import { createKernel, resolveConfig, type Kernel, type OpcoConfig } from '@opco-proxy/core/application';
import { startSandbox, type Sandbox, type SandboxOptions } from '@opco-proxy/adapter-sandbox';
import { contractOf, contractProblems, type Contract } from './contract.js';

export const TEST_MASTER_KEY = '0f'.repeat(32);
export const KEY_A = 'tenant-a-key-0001';
export const KEY_B = 'tenant-b-key-0002';

export interface ServiceOptions {
  /** Config file keys, merged over the test defaults (sections as a file would give them). */
  config?: Record<string, unknown>;
  /** opcoId of the main entry (default `sandbox`), e.g. `classic` in front of the classic shape. */
  opcoId?: string;
  /** Overrides of the main opco entry (rateLimit, cacheTtlS, adapter, ...). */
  opco?: Partial<OpcoConfig>;
  /** More opcoIds pointing at the same sandbox, e.g. {common: {adapter: 'common-api'}}. */
  opcos?: Record<string, Partial<OpcoConfig>>;
  sandbox?: SandboxOptions;
  /** Reuse a running sandbox (several instances against one upstream). */
  upstream?: Sandbox;
  store?: Store;
  /** A queue opened by the test (not closed by the service). */
  queue?: Queue;
  /** Replaces DNS for the kernel (SSRF tests). */
  resolveHost?: HostResolver;
  /** Extra environment (secrets) for resolveConfig. */
  env?: Record<string, string>;
  /** Collects log lines instead of printing them. */
  logs?: string[];
  /** Collects every domain event the service emits. */
  events?: DomainEvent[];
  /** Plugins given as objects, registered with the configured ones. */
  plugins?: Plugin[];
  clock?: Clock;
  /** `api` runs no workers (several instances on one store and queue); default `serve`. */
  role?: 'serve' | 'api';
}

export interface Service {
  url: string;
  kernel: Kernel;
  sandbox: Sandbox;
  get(path: string, options?: RequestOptions): Promise<Reply>;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

export interface RequestOptions {
  key?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  /** The upstream was made to drift from the schema (D14): the answer's body is not checked against /doc. */
  drift?: boolean;
  /** The document to check the answer against (default: every operation's). */
  contract?: Contract;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const sandbox = options.upstream ?? (await startSandbox(options.sandbox));
  const upstreamEntry = (overrides?: Partial<OpcoConfig>) => ({
    adapter: 'sandbox',
    baseUrl: sandbox.url,
    clientId: 'test-client',
    clientSecretEnv: 'TEST_SANDBOX_SECRET',
    // A sandbox authenticating with a static key has no token endpoint.
    ...(sandbox.tokenUrl ? { tokenUrl: sandbox.tokenUrl } : {}),
    ...overrides,
  });
  const opcos: Record<string, OpcoConfig> = { [options.opcoId ?? 'sandbox']: upstreamEntry(options.opco) };
  for (const [id, overrides] of Object.entries(options.opcos ?? {})) opcos[id] = upstreamEntry(overrides);
  const raw = {
    mode: 'development',
    host: '127.0.0.1',
    logLevel: options.logs ? 'debug' : 'silent',
    // Tests stop their services often; a stop must not wait 25 s for work a test abandoned.
    shutdownGraceMs: 2000,
    // Every simulated tenant comes from 127.0.0.1, most with keys the sandbox has never seen:
    // the per-address limit of unproven keys is what e2e/test/edge-attacks.test.ts tests.
    addressRateLimit: { perSecond: 10_000, burst: 10_000, freeFailures: 10_000 },
    // Most tests play one tenant on a frozen clock: a job or sync message over its tenant's share
    // of the slots would come back after a delay that clock never reaches. The share between
    // tenants is what e2e/test/fairness.test.ts tests, on the defaults.
    jobs: { tenantShare: 1 },
    sync: { tenantShare: 1 },
    // Every simulated client connects from 127.0.0.1, often many at once: the per-address
    // connection cap is what e2e/test/slow-clients.test.ts tests.
    server: { maxConnectionsPerAddress: 0 },
    ...options.config,
    opcos,
  };
  try {
    return await listen(options, sandbox, raw);
  } catch (err) {
    if (!options.upstream) await sandbox.close();
    throw err;
  }
}

async function listen(options: ServiceOptions, sandbox: Sandbox, raw: unknown): Promise<Service> {
  const config = resolveConfig(
    raw,
    { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, TEST_SANDBOX_SECRET: 'test-secret', ...options.env },
    { parts: CONFIG_PARTS },
  );
  const log = options.logs ? createLogger({ level: 'debug', destination: lineCollector(options.logs) }) : undefined;
  const plugins = [...(options.plugins ?? [])];
  const events = options.events;
  if (events)
    plugins.push({
      name: 'test-event-collector',
      register: (api) => api.addHook('event', (event) => void events.push(event)),
    });
  const kernel = await createKernel(config, {
    store: options.store,
    queue: options.queue,
    log,
    resolveHost: options.resolveHost,
    clock: options.clock,
    plugins,
    role: options.role,
    bundled: BUNDLED,
  });
  const url = await kernel.listen(0, '127.0.0.1');
  // Answers are checked against the document this instance publishes (only its plugins' routes).
  const contract = contractOf(await (await fetch(`${url}/doc`)).json());
  const request = (method: string, path: string, req: RequestOptions = {}) =>
    send(url, method, path, { ...req, contract });
  return {
    url,
    kernel,
    sandbox,
    request,
    get: (path, req) => request('GET', path, req),
    async close() {
      await kernel.close();
      if (!options.upstream) await sandbox.close();
    },
  };
}

export async function send(url: string, method: string, path: string, req: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...req.headers };
  if (req.key !== null) headers['x-api-key'] = req.key ?? KEY_A;
  let body: string | undefined = req.rawBody;
  if (req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(url + path, { method, headers, body });
  const text = await response.text();
  const problems = contractProblems(method, url + path, response.status, response.headers, text, {
    checkBody: !req.drift,
    contract: req.contract,
  });
  if (problems.length > 0)
    throw new Error(`${method} ${path} answered ${response.status}, not as /doc says:\n- ${problems.join('\n- ')}`);
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

function lineCollector(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}
