/**
 * Where a config value comes from (D2, D3, docs/configuration.md): defaults < file < environment
 * < command-line flags. The environment layer has named variables for the keys operators set most
 * (`PORT`, `HOST`, `LOG_LEVEL`, the store and queue URLs, which hold credentials and so belong
 * outside the file) and one generic rule for every other key: `OPCO_PROXY__jobs__leaseMs=5000`
 * sets `jobs.leaseMs`, the value read as JSON when it parses and as a string otherwise. Layers are
 * merged into the file's object before validation, so a bad value from the environment is
 * reported like one from the file, with the variable that set it.
 */
import { ConfigError } from '../errors/kernel-errors.js';

/** A key path in the config (`['jobs', 'leaseMs']`). */
type KeyPath = string[];

interface NamedVariable {
  name: string;
  path: KeyPath;
  /** `json`: a number or boolean key; `string`: taken verbatim. */
  value: 'json' | 'string';
  /** A URL names the backend, so setting it switches an embedded store or queue to that backend. */
  backend?: 'mongodb' | 'rabbitmq';
}

/** Named variables, applied after the generic rule (they win when both set one key). */
export const NAMED_ENV_VARIABLES: readonly NamedVariable[] = [
  { name: 'PORT', path: ['port'], value: 'json' },
  { name: 'HOST', path: ['host'], value: 'string' },
  { name: 'METRICS_PORT', path: ['metricsPort'], value: 'json' },
  { name: 'LOG_LEVEL', path: ['logLevel'], value: 'string' },
  { name: 'OPCO_PROXY_STORE_URL', path: ['store', 'url'], value: 'string', backend: 'mongodb' },
  { name: 'OPCO_PROXY_QUEUE_URL', path: ['queue', 'url'], value: 'string', backend: 'rabbitmq' },
];

/** `OPCO_PROXY__<key>__<key>...`: any config key, one `__` between levels. */
export const GENERIC_ENV_PREFIX = 'OPCO_PROXY__';

/** The command-line flags that set config keys (`--port`, `--host`, `--log-level`). */
export interface ConfigFlags {
  port?: string;
  host?: string;
  logLevel?: string;
}

const FLAG_KEYS: Record<keyof ConfigFlags, { flag: string; path: KeyPath; value: 'json' | 'string' }> = {
  port: { flag: '--port', path: ['port'], value: 'json' },
  host: { flag: '--host', path: ['host'], value: 'string' },
  logLevel: { flag: '--log-level', path: ['logLevel'], value: 'string' },
};

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface LayeredConfig {
  /** The file's object with the environment and the flags merged in (not validated yet). */
  raw: unknown;
  /** Dotted key path -> what set it (`PORT`, `OPCO_PROXY__jobs__leaseMs`, `--port`). */
  sources: Map<string, string>;
}

/**
 * Merges the environment and the flags over the file's content. Empty variables count as unset.
 * With `keys` (a config of another shape, the hub's), variables for other top-level keys are ignored.
 */
export function layerConfig(
  file: unknown,
  env: NodeJS.ProcessEnv = {},
  flags: ConfigFlags = {},
  keys?: readonly string[],
): LayeredConfig {
  // Only a JSON object can take overrides; anything else is left for the schema to refuse.
  if (!isObject(file)) return { raw: file, sources: new Map() };
  const raw = structuredClone(file);
  const sources = new Map<string, string>();
  const set = (path: KeyPath, value: unknown, source: string) => {
    if (keys && !keys.includes(path[0])) return;
    setPath(raw, path, value);
    sources.set(path.join('.'), source);
  };
  for (const name of Object.keys(env)
    .filter((key) => key.startsWith(GENERIC_ENV_PREFIX))
    .sort()) {
    const text = env[name];
    if (!text) continue;
    const path = name.slice(GENERIC_ENV_PREFIX.length).split('__');
    if (path.some((key) => key === '' || UNSAFE_KEYS.has(key))) {
      throw new ConfigError(
        `invalid configuration: ${name}: not a config key path (OPCO_PROXY__<key>__<key>, e.g. OPCO_PROXY__jobs__leaseMs)`,
      );
    }
    set(path, parseValue(text, 'json'), name);
  }
  for (const variable of NAMED_ENV_VARIABLES) {
    const text = env[variable.name];
    if (!text) continue;
    if (keys && !keys.includes(variable.path[0])) continue;
    if (variable.backend) switchBackend(raw, variable.path[0], variable.backend);
    set(variable.path, parseValue(text, variable.value), variable.name);
  }
  for (const [key, spec] of Object.entries(FLAG_KEYS) as Array<
    [keyof ConfigFlags, (typeof FLAG_KEYS)[keyof ConfigFlags]]
  >) {
    const text = flags[key];
    if (text !== undefined) set(spec.path, parseValue(text, spec.value), spec.flag);
  }
  return { raw, sources };
}

/** Adds `(from VARIABLE)` to a `path: message` error whose key a variable or a flag set. */
export function attributeError(error: string, sources: Map<string, string>): string {
  const path = error.slice(0, error.indexOf(':'));
  let best: string | undefined;
  for (const key of sources.keys()) {
    const covers = path === key || path.startsWith(`${key}.`) || key.startsWith(`${path}.`);
    if (covers && (!best || key.length > best.length)) best = key;
  }
  return best ? `${error} (from ${sources.get(best)})` : error;
}

function parseValue(text: string, kind: 'json' | 'string'): unknown {
  if (kind === 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `store: {type: 'embedded', path}` + a MongoDB URL -> `{type: 'mongodb', database?}`. */
function switchBackend(raw: Record<string, unknown>, key: string, backend: string): void {
  const section = isObject(raw[key]) ? raw[key] : {};
  if (section.type === backend) return;
  const { path: _path, ...rest } = section;
  raw[key] = { ...rest, type: backend };
}

function setPath(target: Record<string, unknown>, path: KeyPath, value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
