/**
 * The hub's configuration (D28): a JSON file checked against schemas/json/hub-config.schema.json
 * (the type of the file is generated from it), secrets from the environment only. A bad value
 * stops start-up (or a reload) with one message per problem naming the key, as core's config does.
 */
import { ConfigError } from '@opco-proxy/core';
import { type AddressLimitOptions } from '@opco-proxy/core/limits';
import {
  attributeError,
  DEFAULTS,
  layerConfig,
  readConfigFile,
  TrustedProxies,
  type ConfigFlags,
} from '@opco-proxy/core/application';
import { validate, type HubConfigFile } from '@opco-proxy/schemas';
import type { RateLimit } from '@opco-proxy/plugin-hub';
import { DEFAULT_ADAPTIVE, type AdaptiveOptions } from './adaptive-limit.js';
import { DEFAULT_ISSUER } from './grant-token.js';
import { DEFAULT_LEASE_MS, DEFAULT_RENEW_MS } from './hub-leadership.js';

type Filled<T> = { [K in keyof T]-?: NonNullable<T[K]> };

export type HubStoreConfig = { type: 'embedded'; path?: string } | { type: 'mongodb'; url: string; database?: string };

/** Two hubs on one MongoDB store, one leading under a lease (hub-leadership.ts). */
export interface FailoverConfig {
  /** This hub's address as instances reach it (shown as the leader's url); null when not given. */
  url: string | null;
  leaseMs: number;
  renewMs: number;
}

/** The config file with every default applied (the defaults: below, adaptive-limit.ts, core's DEFAULTS). */
export interface HubServerConfig extends Omit<
  Filled<HubConfigFile>,
  'store' | 'adaptive' | 'addressRateLimit' | 'failover'
> {
  store: HubStoreConfig;
  /** Absent: this hub leads alone, without a lease. */
  failover?: FailoverConfig;
  adaptive: AdaptiveOptions;
  /** Core's per-address limits, the same keys and defaults as an instance's. */
  addressRateLimit: AddressLimitOptions;
}

export interface HubSecrets {
  /** OPCO_PROXY_HUB_SECRET: 64 hex characters, the HMAC key of grants. */
  signingSecret: string;
  /** OPCO_PROXY_HUB_ADMIN_KEY: at least 32 characters. */
  adminKey: string;
}

export const HUB_DEFAULT_PORT = 8090;
const KEYS = [
  'port',
  'host',
  'store',
  'failover',
  'issuer',
  'opcos',
  'adaptive',
  'unprovenShare',
  'addressRateLimit',
  'trustedProxies',
  'logLevel',
];

function describe(errors: string[]): string {
  if (errors.length === 1) return `invalid hub configuration: ${errors[0]}`;
  return `invalid hub configuration (${errors.length} problems):\n  ${errors.join('\n  ')}`;
}

/** The rules a schema cannot say: each trusted proxy is an address or CIDR that parses. */
function proxyErrors(proxies: string[]): string[] {
  return proxies.flatMap((cidr, index) => {
    try {
      new TrustedProxies([cidr]);
      return [];
    } catch (err) {
      return [`trustedProxies.${index}: ${(err as Error).message.replace(/^trustedProxies: /, '')}`];
    }
  });
}

/** The rules of `failover` a schema cannot say: a store both hubs share, a renewal well within the lease. */
function failoverErrors(file: HubConfigFile): string[] {
  if (!file.failover) return [];
  const errors: string[] = [];
  if (file.store?.type !== 'mongodb')
    errors.push('failover: needs a store both hubs share: store.type must be mongodb');
  const leaseMs = file.failover.leaseMs ?? DEFAULT_LEASE_MS;
  const renewMs = file.failover.renewMs ?? DEFAULT_RENEW_MS;
  if (renewMs * 3 > leaseMs)
    errors.push(
      `failover.renewMs: must be at most a third of failover.leaseMs (${leaseMs}), so that a renewal can fail twice`,
    );
  return errors;
}

/** Checks a config file's content and fills the defaults; `sources` names where layered values came from. */
export function parseHubConfig(raw: unknown, sources = new Map<string, string>()): HubServerConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError('invalid hub configuration: the file must hold a JSON object');
  const result = validate('hub-config', raw);
  const file = raw as HubConfigFile;
  const errors = result.valid ? [...proxyErrors(file.trustedProxies ?? []), ...failoverErrors(file)] : result.errors;
  if (errors.length > 0) throw new ConfigError(describe(errors.map((error) => attributeError(error, sources))));
  return {
    port: file.port ?? HUB_DEFAULT_PORT,
    host: file.host ?? '0.0.0.0',
    store: (file.store as HubStoreConfig | undefined) ?? { type: 'embedded' },
    ...(file.failover
      ? {
          failover: {
            url: file.failover.url ?? null,
            leaseMs: file.failover.leaseMs ?? DEFAULT_LEASE_MS,
            renewMs: file.failover.renewMs ?? DEFAULT_RENEW_MS,
          },
        }
      : {}),
    issuer: file.issuer ?? DEFAULT_ISSUER,
    opcos: file.opcos ?? {},
    adaptive: { ...DEFAULT_ADAPTIVE, ...file.adaptive },
    unprovenShare: file.unprovenShare ?? DEFAULTS.tenantKeys.unprovenShare,
    addressRateLimit: { ...DEFAULTS.addressRateLimit, ...file.addressRateLimit },
    trustedProxies: file.trustedProxies ?? [],
    logLevel: file.logLevel ?? 'info',
  };
}

/**
 * Reads and checks the file with the service's overrides (docs/configuration.md): `PORT`, `HOST`,
 * `LOG_LEVEL`, `OPCO_PROXY_STORE_URL`, `OPCO_PROXY__<key>...`, then the command-line flags. Only
 * the hub's own keys are taken from the environment, so it may share one with the instances.
 */
export function loadHubConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  flags: ConfigFlags = {},
): HubServerConfig {
  const { raw, sources } = layerConfig(readConfigFile(path), env, flags, KEYS);
  return parseHubConfig(raw, sources);
}

/** The two secrets; the message names the variable at fault and never shows its value. */
export function readHubSecrets(env: NodeJS.ProcessEnv): HubSecrets {
  const signingSecret = env.OPCO_PROXY_HUB_SECRET;
  if (!signingSecret)
    throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_SECRET: required (64 hex characters)');
  if (!/^[0-9a-fA-F]{64}$/.test(signingSecret))
    throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_SECRET: must be 64 hex characters');
  const adminKey = env.OPCO_PROXY_HUB_ADMIN_KEY;
  if (!adminKey)
    throw new ConfigError('invalid hub configuration: OPCO_PROXY_HUB_ADMIN_KEY: required (at least 32 characters)');
  if (adminKey.length < 32 || /[\s\u0000-\u001f\u007f]/.test(adminKey)) {
    throw new ConfigError(
      'invalid hub configuration: OPCO_PROXY_HUB_ADMIN_KEY: must be at least 32 characters, without spaces or control characters',
    );
  }
  return { signingSecret, adminKey };
}

export function rateLimits(config: HubServerConfig): Record<string, RateLimit> {
  return Object.fromEntries(Object.entries(config.opcos).map(([opcoId, opco]) => [opcoId, opco.rateLimit]));
}
