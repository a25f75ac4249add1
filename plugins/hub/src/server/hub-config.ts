/**
 * The hub's configuration (D28): a JSON file checked here, secrets from the environment only.
 * A bad value stops start-up (or a reload) with one message naming the key, as core's config does.
 */
import { ConfigError, DEFAULTS, isPlainObject, layerConfig, readConfigFile, TrustedProxies, type AddressLimitOptions, type ConfigFlags } from '@opco-proxy/core';
import { FORBIDDEN_KEYS, type RateLimit } from '../protocol.js';
import { DEFAULT_ADAPTIVE, type AdaptiveOptions } from './adaptive-limit.js';
import { DEFAULT_ISSUER } from './grant-token.js';

export type HubStoreConfig = { type: 'embedded'; path?: string } | { type: 'mongodb'; url: string; database?: string };

export interface HubConfig {
  port: number;
  host: string;
  /** Holds the hub keys and the grant journal. */
  store: HubStoreConfig;
  /** The JWT `iss` of grants. */
  issuer: string;
  opcos: Record<string, { rateLimit: RateLimit }>;
  /** Tuning of the adaptive limit; defaults in adaptive-limit.ts. */
  adaptive: AdaptiveOptions;
  /** Share of each budget's effective limit that asks of unproven tenants share (issue 27); core's default. */
  unprovenShare: number;
  /** Per client address: failed authentications (wrong admin or hub keys) and the backoff after wrong admin keys; core's keys and defaults. */
  addressRateLimit: AddressLimitOptions;
  /** Proxies whose X-Forwarded-For names the client address (addresses or CIDRs), as core's. */
  trustedProxies: string[];
  logLevel: string;
}

export interface HubSecrets {
  /** OPCO_PROXY_HUB_SECRET: 64 hex characters, the HMAC key of grants. */
  signingSecret: string;
  /** OPCO_PROXY_HUB_ADMIN_KEY: at least 32 characters. */
  adminKey: string;
}

export const HUB_DEFAULT_PORT = 8090;
const KEYS = ['port', 'host', 'store', 'issuer', 'opcos', 'adaptive', 'unprovenShare', 'addressRateLimit', 'trustedProxies', 'logLevel'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const OPCO_ID = /^[A-Za-z0-9_-]{1,64}$/;

function fail(path: string, problem: string): never {
  throw new ConfigError(`invalid hub configuration: ${path}: ${problem}`);
}

function integer(value: unknown, path: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) fail(path, `must be an integer from ${min} to ${max}`);
  return value as number;
}

function fraction(value: unknown, path: string): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) fail(path, 'must be a number above 0 and at most 1');
  return value;
}

function positive(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail(path, 'must be a number above 0');
  return value;
}

function onlyKeys(value: Record<string, unknown>, path: string, allowed: string[]): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(path ? `${path}.${key}` : key, 'is not a known key');
}

function parseStore(value: unknown): HubStoreConfig {
  if (value === undefined) return { type: 'embedded' };
  if (!isPlainObject(value)) fail('store', 'must be an object');
  if (value.type === 'embedded') {
    onlyKeys(value, 'store', ['type', 'path']);
    if (value.path !== undefined && (typeof value.path !== 'string' || value.path === '')) fail('store.path', 'must be a non-empty string');
    return value.path === undefined ? { type: 'embedded' } : { type: 'embedded', path: value.path };
  }
  if (value.type === 'mongodb') {
    onlyKeys(value, 'store', ['type', 'url', 'database']);
    if (typeof value.url !== 'string' || !/^mongodb(\+srv)?:\/\//.test(value.url)) fail('store.url', 'must be a mongodb:// or mongodb+srv:// URL');
    if (value.database !== undefined && typeof value.database !== 'string') fail('store.database', 'must be a string');
    return { type: 'mongodb', url: value.url, ...(typeof value.database === 'string' ? { database: value.database } : {}) };
  }
  return fail('store.type', 'must be "embedded" or "mongodb"');
}

function parseOpcos(value: unknown): HubConfig['opcos'] {
  if (value === undefined) return {};
  if (!isPlainObject(value)) fail('opcos', 'must be an object');
  const opcos: HubConfig['opcos'] = {};
  for (const [opcoId, opco] of Object.entries(value)) {
    const path = `opcos.${opcoId}`;
    if (!OPCO_ID.test(opcoId) || FORBIDDEN_KEYS.includes(opcoId)) fail(path, 'an opcoId is 1-64 letters, digits, _ or -');
    if (!isPlainObject(opco)) fail(path, 'must be an object');
    onlyKeys(opco, path, ['rateLimit']);
    const rateLimit = opco.rateLimit;
    if (!isPlainObject(rateLimit)) fail(`${path}.rateLimit`, 'is required: {limit, windowMs}');
    onlyKeys(rateLimit, `${path}.rateLimit`, ['limit', 'windowMs']);
    opcos[opcoId] = {
      rateLimit: {
        limit: integer(rateLimit.limit, `${path}.rateLimit.limit`, 1, 1_000_000),
        windowMs: integer(rateLimit.windowMs, `${path}.rateLimit.windowMs`, 1, 86_400_000),
      },
    };
  }
  return opcos;
}

function parseAdaptive(value: unknown): AdaptiveOptions {
  if (value === undefined) return { ...DEFAULT_ADAPTIVE };
  if (!isPlainObject(value)) fail('adaptive', 'must be an object');
  onlyKeys(value, 'adaptive', Object.keys(DEFAULT_ADAPTIVE));
  const options = { ...DEFAULT_ADAPTIVE };
  if (value.intervalMs !== undefined) options.intervalMs = integer(value.intervalMs, 'adaptive.intervalMs', 100, 3_600_000);
  if (value.minRequests !== undefined) options.minRequests = integer(value.minRequests, 'adaptive.minRequests', 0, 1_000_000);
  for (const key of ['decreaseFactor', 'increaseFraction', 'minFraction', 'errorRateThreshold'] as const) {
    if (value[key] !== undefined) options[key] = fraction(value[key], `adaptive.${key}`);
  }
  return options;
}

function parseAddressRateLimit(value: unknown): AddressLimitOptions {
  if (value === undefined) return { ...DEFAULTS.addressRateLimit };
  if (!isPlainObject(value)) fail('addressRateLimit', 'must be an object');
  onlyKeys(value, 'addressRateLimit', Object.keys(DEFAULTS.addressRateLimit));
  const options = { ...DEFAULTS.addressRateLimit };
  if (value.perSecond !== undefined) options.perSecond = positive(value.perSecond, 'addressRateLimit.perSecond');
  if (value.burst !== undefined) options.burst = integer(value.burst, 'addressRateLimit.burst', 1, 1_000_000);
  if (value.freeFailures !== undefined) options.freeFailures = integer(value.freeFailures, 'addressRateLimit.freeFailures', 1, 1_000_000);
  if (value.maxBackoffS !== undefined) options.maxBackoffS = integer(value.maxBackoffS, 'addressRateLimit.maxBackoffS', 1, 86_400);
  return options;
}

function parseTrustedProxies(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('trustedProxies', 'must be an array of addresses or CIDRs');
  return value.map((cidr: unknown, index) => {
    if (typeof cidr !== 'string') fail(`trustedProxies.${index}`, 'must be an address or CIDR');
    try {
      new TrustedProxies([cidr]);
    } catch (err) {
      fail(`trustedProxies.${index}`, (err as Error).message.replace(/^trustedProxies: /, ''));
    }
    return cidr;
  });
}

/** Checks a config file's content and fills the defaults. */
export function parseHubConfig(raw: unknown): HubConfig {
  if (!isPlainObject(raw)) throw new ConfigError('invalid hub configuration: the file must hold a JSON object');
  onlyKeys(raw, '', KEYS);
  if (raw.host !== undefined && (typeof raw.host !== 'string' || raw.host === '')) fail('host', 'must be a non-empty string');
  if (raw.issuer !== undefined && (typeof raw.issuer !== 'string' || raw.issuer === '' || raw.issuer.length > 200)) fail('issuer', 'must be a string of 1-200 characters');
  if (raw.logLevel !== undefined && !LOG_LEVELS.includes(raw.logLevel as string)) fail('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port: raw.port === undefined ? HUB_DEFAULT_PORT : integer(raw.port, 'port', 0, 65535),
    host: (raw.host) ?? '0.0.0.0',
    store: parseStore(raw.store),
    issuer: (raw.issuer) ?? DEFAULT_ISSUER,
    opcos: parseOpcos(raw.opcos),
    adaptive: parseAdaptive(raw.adaptive),
    unprovenShare: raw.unprovenShare === undefined ? DEFAULTS.tenantKeys.unprovenShare : fraction(raw.unprovenShare, 'unprovenShare'),
    addressRateLimit: parseAddressRateLimit(raw.addressRateLimit),
    trustedProxies: parseTrustedProxies(raw.trustedProxies),
    logLevel: (raw.logLevel as string | undefined) ?? 'info',
  };
}

/**
 * Reads and checks the file with the service's overrides (docs/configuration.md): `PORT`, `HOST`,
 * `LOG_LEVEL`, `OPCO_PROXY_STORE_URL`, `OPCO_PROXY__<key>...`, then the command-line flags. Only
 * the hub's own keys are taken from the environment, so it may share one with the instances.
 */
export function loadHubConfig(path: string, env: NodeJS.ProcessEnv = process.env, flags: ConfigFlags = {}): HubConfig {
  const { raw, sources } = layerConfig(readConfigFile(path), env, flags, KEYS);
  try {
    return parseHubConfig(raw);
  } catch (err) {
    const match = err instanceof ConfigError ? /^invalid hub configuration: ([^:]+): /.exec(err.message) : null;
    const source = match ? sources.get(match[1]) : undefined;
    throw source ? new ConfigError(`${err instanceof Error ? err.message : String(err)} (from ${source})`) : err;
  }
}

/** The two secrets; the message names the variable at fault and never shows its value. */
export function readHubSecrets(env: NodeJS.ProcessEnv): HubSecrets {
  const signingSecret = env.OPCO_PROXY_HUB_SECRET;
  if (!signingSecret) throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_SECRET: required (64 hex characters)');
  if (!/^[0-9a-fA-F]{64}$/.test(signingSecret)) throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_SECRET: must be 64 hex characters');
  const adminKey = env.OPCO_PROXY_HUB_ADMIN_KEY;
  if (!adminKey) throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_ADMIN_KEY: required (at least 32 characters)');
  if (adminKey.length < 32 || /[\s\u0000-\u001f\u007f]/.test(adminKey)) {
    throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_ADMIN_KEY: must be at least 32 characters, without spaces or control characters');
  }
  return { signingSecret, adminKey };
}

export function rateLimits(config: HubConfig): Record<string, RateLimit> {
  return Object.fromEntries(Object.entries(config.opcos).map(([opcoId, opco]) => [opcoId, opco.rateLimit]));
}
