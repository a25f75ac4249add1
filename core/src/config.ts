/**
 * Configuration (D2, D3): a JSON file validated against one schema, defaults from the spec,
 * secrets from the environment only. An invalid config stops start-up with one message that
 * names the bad key. Upstream credentials are read by each opco's authentication strategy
 * (upstream-auth/), which knows which keys it needs.
 */
import { readFileSync } from 'node:fs';
import { validate, type ConfigFile } from '@opco-proxy/schemas';
import { parseMasterKey } from './crypto.js';
import { ConfigError, kernelError } from './kernel-errors.js';
import { attributeError, layerConfig, type ConfigFlags } from './config-layers.js';
import { TrustedProxies } from './http/client-address.js';

export { NAMED_ENV_VARIABLES, GENERIC_ENV_PREFIX, layerConfig, type ConfigFlags } from './config-layers.js';

type Section<K extends keyof ConfigFile> = Required<NonNullable<ConfigFile[K]>>;

/** One upstream OPCO as the config file declares it (types generated from config.schema.json). */
export type OpcoConfig = NonNullable<ConfigFile['opcos']>[string];
export type HubConfig = NonNullable<ConfigFile['hub']>;

/** The config file with every default applied; store and queue narrowed to their two shapes. */
export interface Config {
  port: number;
  host: string;
  mode: NonNullable<ConfigFile['mode']>;
  store: { type: 'embedded'; path?: string } | { type: 'mongodb'; url: string; database?: string };
  queue: { type: 'embedded' } | { type: 'rabbitmq'; url: string; prefix?: string };
  plugins: string[];
  publisher: Section<'publisher'>;
  opcos: Record<string, OpcoConfig>;
  hub?: HubConfig;
  upstream: Section<'upstream'>;
  jobs: Section<'jobs'>;
  sync: Section<'sync'>;
  webhooks: Section<'webhooks'>;
  limits: Section<'limits'>;
  tenantRateLimit: Section<'tenantRateLimit'>;
  /** D8: when non-empty, only these tenant hashes may use the service. */
  allowedTenants: string[];
  /** Issue 27 (P13): proven and refused keys, and the unproven tenants' slice of the budget. */
  tenantKeys: Section<'tenantKeys'>;
  addressRateLimit: Section<'addressRateLimit'>;
  trustedProxies: string[];
  /** D32: audit records' retention, reads of personal data recorded or not. */
  audit: Section<'audit'>;
  cache: Section<'cache'>;
  /** P3: how long a stopping process lets requests and jobs in flight finish. */
  shutdownGraceMs: number;
  logLevel: NonNullable<ConfigFile['logLevel']>;
}

/** What the kernel runs with: the file's config plus what it reads from the environment. */
export interface ResolvedConfig extends Config {
  demo: boolean;
  masterKey: Buffer;
  /** OPCO_PROXY_ADMIN_KEY (P9): the operator routes and the console; absent, they are off. */
  adminKey?: string;
  /** The environment, for the opcos' authentication strategies (secrets named by the config). */
  env: Readonly<Record<string, string | undefined>>;
}

/** Feature plugins enabled when `plugins` is not given (D3: all but hub). */
export const DEFAULT_PLUGINS = ['cache', 'jobs', 'webhooks', 'sync', 'console'];

/** Route prefixes of the service itself; an opcoId may not shadow them. */
export const RESERVED_OPCO_IDS = ['health', 'ready', 'doc', 'docs', 'metrics', 'sync', 'webhooks', 'pollers', 'admin', 'ws', 'console'];

export { ConfigError };

const JOB_BACKOFF_MS: [number, ...number[]] = [1000, 2000, 4000];

export const DEFAULTS: Omit<Config, 'opcos'> = {
  port: 8080,
  host: '0.0.0.0',
  mode: 'production',
  store: { type: 'embedded' },
  queue: { type: 'embedded' },
  plugins: DEFAULT_PLUGINS,
  publisher: { editeur: 'opco-proxy', logiciel: 'opco-proxy', version: '0.1.0' },
  upstream: { timeoutMs: 30_000, maxAnswerBytes: 8 * 1024 * 1024 },
  jobs: { backoffMs: JOB_BACKOFF_MS, leaseMs: 30_000, prefetch: 4, retentionDays: 30, sweepIntervalMs: 60_000 },
  sync: { backoffMs: JOB_BACKOFF_MS, leaseMs: 30_000, prefetch: 4, sweepIntervalMs: 60_000, pollTickMs: 1000 },
  webhooks: { timeoutMs: 10_000, retryDelaysMs: [0, 1000, 5000, 15_000] as [number, ...number[]], concurrency: 16, retentionDays: 30, sweepIntervalMs: 30_000 },
  limits: { bodyBytes: 25 * 1024 * 1024, fileBytes: 10 * 1024 * 1024 },
  tenantRateLimit: { perSecond: 50, burst: 100 },
  allowedTenants: [],
  tenantKeys: { provenTtlS: 86_400, refusedTtlS: 300, unprovenShare: 0.1 },
  addressRateLimit: { perSecond: 2, burst: 20, freeFailures: 5, maxBackoffS: 300 },
  trustedProxies: [],
  audit: { retentionDays: 400, reads: false, sweepIntervalMs: 3_600_000 },
  cache: { sweepIntervalMs: 60_000, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 },
  shutdownGraceMs: 25_000,
  logLevel: 'info',
};

/** D28: an instance's view of the hub; the hub plugin reads it. */
export const HUB_DEFAULTS = { expectedInstances: 1, maxWaitMs: 30_000 };

export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw kernelError('OPCO_ERR_CONFIG_FILE', { path, problem: `cannot be read: ${(err as Error).message}` });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw kernelError('OPCO_ERR_CONFIG_FILE', { path, problem: `is not valid JSON: ${(err as Error).message}` });
  }
}

/**
 * Validates, fills defaults, reads secrets. The environment and the command-line flags win over
 * the file (config-layers.ts); every problem is in the message, one per line.
 */
export function resolveConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env, options: { demo?: boolean; flags?: ConfigFlags } = {}): ResolvedConfig {
  const checked = checkConfig(raw, env, options.flags);
  if (!checked.config || checked.errors.length > 0) throw new ConfigError(describeConfigErrors(checked.errors));
  const demo = options.demo ?? false;
  return { ...checked.config, demo, masterKey: readMasterKey(env, demo), adminKey: readAdminKey(env, demo), env: { ...env } };
}

export function describeConfigErrors(errors: string[]): string {
  if (errors.length === 1) return `invalid configuration: ${errors[0]}`;
  return `invalid configuration (${errors.length} problems):\n  ${errors.join('\n  ')}`;
}

/**
 * The checks of the file's content that need no secret (`opco-proxy config check` and start-up):
 * the schema, then the rules a schema cannot say. Errors are `dotted.path: problem`; `config` is
 * there once the schema holds, even when a rule fails, so a checker can go on to other checks.
 */
export function checkConfig(raw: unknown, env: NodeJS.ProcessEnv = {}, flags: ConfigFlags = {}): { config?: Config; errors: string[] } {
  const layered = layerConfig(raw, env, flags);
  const result = validate('config', layered.raw);
  if (!result.valid) return { errors: result.errors.map((error) => attributeError(error, layered.sources)) };
  const { $schema: _editorSchema, ...file } = layered.raw as Partial<Config> & { opcos?: Record<string, OpcoConfig>; $schema?: string };
  const config: Config = {
    ...DEFAULTS,
    ...file,
    publisher: { ...DEFAULTS.publisher, ...file.publisher },
    upstream: { ...DEFAULTS.upstream, ...file.upstream },
    jobs: { ...DEFAULTS.jobs, ...file.jobs },
    sync: { ...DEFAULTS.sync, ...file.sync },
    webhooks: { ...DEFAULTS.webhooks, ...file.webhooks },
    limits: { ...DEFAULTS.limits, ...file.limits },
    tenantRateLimit: { ...DEFAULTS.tenantRateLimit, ...file.tenantRateLimit },
    tenantKeys: { ...DEFAULTS.tenantKeys, ...file.tenantKeys },
    addressRateLimit: { ...DEFAULTS.addressRateLimit, ...file.addressRateLimit },
    audit: { ...DEFAULTS.audit, ...file.audit },
    cache: { ...DEFAULTS.cache, ...file.cache },
    opcos: file.opcos ?? {},
  };
  const errors: string[] = [];
  for (const opcoId of Object.keys(config.opcos)) {
    if (RESERVED_OPCO_IDS.includes(opcoId)) errors.push(`opcos.${opcoId}: "${opcoId}" is reserved for the service's own routes`);
  }
  if (config.plugins.includes('hub') && !config.hub) errors.push('hub: required when the "hub" plugin is enabled');
  config.trustedProxies.forEach((cidr, index) => {
    try {
      new TrustedProxies([cidr]);
    } catch (err) {
      errors.push(`trustedProxies.${index}: ${(err as Error).message.replace(/^trustedProxies: /, '')}`);
    }
  });
  return { config, errors };
}

/** Demo mode's operator key, printed at start: nothing it guards outlives the process. */
export const DEMO_ADMIN_KEY = 'demo-admin-key-0000000000000000';

function readAdminKey(env: NodeJS.ProcessEnv, demo: boolean): string | undefined {
  const key = env.OPCO_PROXY_ADMIN_KEY;
  if (!key) return demo ? DEMO_ADMIN_KEY : undefined;
  if (key.length < 32) throw new ConfigError('invalid configuration: OPCO_PROXY_ADMIN_KEY: must be at least 32 characters');
  return key;
}

function readMasterKey(env: NodeJS.ProcessEnv, demo: boolean): Buffer {
  const hex = env.OPCO_PROXY_MASTER_KEY;
  if (!hex) {
    if (demo) return Buffer.alloc(32, 7); // demo mode only: nothing it stores outlives the process
    throw new ConfigError('invalid configuration: OPCO_PROXY_MASTER_KEY: required outside demo mode (64 hex characters)');
  }
  try {
    return parseMasterKey(hex);
  } catch {
    throw new ConfigError('invalid configuration: OPCO_PROXY_MASTER_KEY: must be 64 hex characters (32 bytes)');
  }
}
