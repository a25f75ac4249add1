/**
 * Configuration (D2, D3): a JSON file validated against one schema, defaults from the spec,
 * secrets from the environment only. An invalid config stops start-up with one message that
 * names the bad key. Upstream credentials are read by each opco's authentication strategy
 * (upstream-auth/), which knows which keys it needs.
 */
import { readFileSync } from 'node:fs';
import { loadSchema, validateAssembled, type JsonSchema, type KernelConfig } from '@opco-proxy/schemas';
import { parseMasterKey } from '../crypto/crypto.js';
import { ConfigError, kernelError } from '../errors/kernel-errors.js';
import { attributeError, layerConfig, type ConfigFlags } from './config-layers.js';
import { assembleConfigSchema, withDefaults, type ConfigParts } from './config-sections.js';
import { TrustedProxies } from '../http/client-address.js';

export { NAMED_ENV_VARIABLES, GENERIC_ENV_PREFIX, layerConfig, type ConfigFlags } from './config-layers.js';
export {
  assembleConfigSchema,
  withDefaults,
  type ConfigParts,
  type ConfigSection,
  type DriverConfig,
} from './config-sections.js';

type Section<K extends keyof KernelConfig> = Required<NonNullable<KernelConfig[K]>>;

/** One upstream OPCO as the config file declares it (types generated from kernel-config.schema.json). */
export type OpcoConfig = NonNullable<KernelConfig['opcos']>[string];

/**
 * The config file with every default applied. The kernel's own keys are typed here; a plugin's
 * section (`jobs`, `hub`...) is the plugin's, typed by its package from its own schema, and a
 * store or queue driver reads its keys beside `type`.
 */
export interface KernelSettings {
  port: number;
  /** The worker role's /metrics listener (it has no HTTP otherwise); absent, none. */
  metricsPort?: number;
  host: string;
  mode: NonNullable<KernelConfig['mode']>;
  store: { type: string; path?: string; [key: string]: unknown };
  queue: { type: string; [key: string]: unknown };
  plugins: string[];
  publisher: Section<'publisher'>;
  opcos: Record<string, OpcoConfig>;
  upstream: Section<'upstream'>;
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
  /** Issue 42: every instance's counts minute by minute in the store, and how long they are kept. */
  history: Section<'history'>;
  /** P3: how long a stopping process lets requests and jobs in flight finish. */
  shutdownGraceMs: number;
  logLevel: NonNullable<KernelConfig['logLevel']>;
}

/** The kernel's settings and, by their key, the plugins' sections (each plugin types its own). */
export type Config = KernelSettings & { readonly [section: string]: unknown };

/** What the kernel runs with: the file's config plus what it reads from the environment. */
export type ResolvedConfig = Config & {
  demo: boolean;
  masterKey: Buffer;
  /** OPCO_PROXY_ADMIN_KEY (P9): the operator routes and the console; absent, they are off. */
  adminKey?: string;
  /** The environment, for the opcos' authentication strategies (secrets named by the config). */
  env: Readonly<Record<string, string | undefined>>;
};

/** Route prefixes of the service itself; an opcoId may not shadow them. */
export const RESERVED_OPCO_IDS = [
  'health',
  'ready',
  'doc',
  'docs',
  'metrics',
  'sync',
  'webhooks',
  'pollers',
  'admin',
  'ws',
  'console',
];

export { ConfigError };

const KERNEL_SCHEMA = loadSchema('kernel-config');

/** The kernel's defaults, read from its schema (kernel-config.schema.json): the one place they are written. */
export const DEFAULTS = withDefaults(KERNEL_SCHEMA, {}) as KernelSettings;

/** The assembled schema of each set of parts, built once (start-up and `config check` share it). */
const assembledSchemas = new WeakMap<ConfigParts, JsonSchema>();

export function configSchema(parts: ConfigParts = {}): JsonSchema {
  let schema = assembledSchemas.get(parts);
  if (!schema) {
    schema = assembleConfigSchema(KERNEL_SCHEMA, parts);
    assembledSchemas.set(parts, schema);
  }
  return schema;
}

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
export function resolveConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  options: { demo?: boolean; flags?: ConfigFlags; parts?: ConfigParts } = {},
): ResolvedConfig {
  const checked = checkConfig(raw, env, options.flags, options.parts);
  if (!checked.config || checked.errors.length > 0) throw new ConfigError(describeConfigErrors(checked.errors));
  const demo = options.demo ?? false;
  return {
    ...checked.config,
    demo,
    masterKey: readMasterKey(env, demo),
    adminKey: readAdminKey(env, demo),
    env: { ...env },
  };
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
export function checkConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = {},
  flags: ConfigFlags = {},
  parts: ConfigParts = {},
): { config?: Config; errors: string[] } {
  const layered = layerConfig(raw, env, flags);
  const schema = configSchema(parts);
  const result = validateAssembled(schema, layered.raw, 'config');
  if (!result.valid) return { errors: result.errors.map((error) => attributeError(error, layered.sources)) };
  const { $schema: _editorSchema, ...file } = layered.raw as Record<string, unknown>;
  const config = withDefaults(schema, file) as Config;
  const errors: string[] = [];
  for (const opcoId of Object.keys(config.opcos)) {
    if (RESERVED_OPCO_IDS.includes(opcoId))
      errors.push(`opcos.${opcoId}: "${opcoId}" is reserved for the service's own routes`);
  }
  for (const section of parts.sections ?? []) {
    const required = (section.schema.required as string[] | undefined)?.length ?? 0;
    if (required > 0 && config[section.key] === undefined && config.plugins.includes(section.key)) {
      errors.push(`${section.key}: required when the "${section.key}" plugin is enabled`);
    }
  }
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
  if (key.length < 32)
    throw new ConfigError('invalid configuration: OPCO_PROXY_ADMIN_KEY: must be at least 32 characters');
  return key;
}

function readMasterKey(env: NodeJS.ProcessEnv, demo: boolean): Buffer {
  const hex = env.OPCO_PROXY_MASTER_KEY;
  if (!hex) {
    if (demo) return Buffer.alloc(32, 7); // demo mode only: nothing it stores outlives the process
    throw new ConfigError(
      'invalid configuration: OPCO_PROXY_MASTER_KEY: required outside demo mode (64 hex characters)',
    );
  }
  try {
    return parseMasterKey(hex);
  } catch {
    throw new ConfigError('invalid configuration: OPCO_PROXY_MASTER_KEY: must be 64 hex characters (32 bytes)');
  }
}
