/**
 * `opco-proxy config check FILE`: the checks start-up makes, without starting anything, and with
 * every problem listed rather than the first. The file is checked with the environment's and the
 * flags' overrides applied (what the service would run with); secrets are not needed to check a
 * file, so a missing one is a warning here (start-up refuses it).
 */
import { ConfigError, oauthClientCredentials, systemClock } from '@opco-proxy/core';
import { OpcoDirectory } from '@opco-proxy/core/application';
import {
  checkConfig,
  loadPlugins,
  readConfigFile,
  type Bundled,
  type Config,
  type ConfigFlags,
} from '@opco-proxy/core/application';
import { applicationModules } from './bundle.js';
import { CONFIG_PARTS } from './config-parts.js';

export interface ConfigReport {
  /** `dotted.path: problem`, one per problem. */
  errors: string[];
  /** Secrets this environment lacks: not errors of the file. */
  warnings: string[];
  /** One line per section of the config the service would run with (when there is no error). */
  summary: string[];
}

export async function checkConfigFile(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  flags: ConfigFlags = {},
): Promise<ConfigReport> {
  let raw: unknown;
  try {
    raw = readConfigFile(path);
  } catch (err) {
    if (err instanceof ConfigError) return { errors: [err.message], warnings: [], summary: [] };
    throw err;
  }
  const checked = checkConfig(raw, env, flags, CONFIG_PARTS);
  if (!checked.config) return { errors: checked.errors, warnings: [], summary: [] };
  const config = checked.config;
  const errors = [...checked.errors, ...(await packageErrors(config, env, applicationModules(path)))];
  return { errors, warnings: missingSecrets(config, env), summary: errors.length > 0 ? [] : summarize(config) };
}

/** Adapters, plugins and backends are packages: each named one must be installed and be what it claims. */
async function packageErrors(config: Config, env: NodeJS.ProcessEnv, modules: Bundled): Promise<string[]> {
  const errors: string[] = [];
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      errors.push(err.message.replace(/^invalid configuration: /, ''));
    }
  };
  for (const [opcoId, entry] of Object.entries(config.opcos))
    await attempt(() => checkOpco(opcoId, entry, env, modules));
  await attempt(() => loadPlugins(config.plugins, [], modules));
  for (const [key, drivers] of [
    ['store', modules.stores],
    ['queue', modules.queues],
  ] as const) {
    const type = config[key].type;
    if (type !== 'embedded' && !Object.hasOwn(drivers ?? {}, type))
      errors.push(`${key}.type: no ${key} driver "${type}" in this application`);
  }
  return errors;
}

/**
 * The opco's adapter and its authentication keys, as start-up reads them. Secrets are not needed
 * to check a file: the strategy is shown a stand-in for each one this environment lacks, and
 * sends nothing (a strategy fetches tokens on the first call, not at setup).
 */
async function checkOpco(
  opcoId: string,
  entry: Config['opcos'][string],
  env: NodeJS.ProcessEnv,
  modules: Bundled,
): Promise<void> {
  const [opco] = (await OpcoDirectory.load({ [opcoId]: entry }, systemClock, modules)).list();
  const strategy = opco.profile.auth ?? oauthClientCredentials();
  const secrets = new Proxy(
    {},
    { get: (_target, name) => (typeof name === 'string' ? env[name] || 'stand-in' : undefined) },
  );
  strategy.setup({
    opcoId,
    adapter: entry.adapter,
    entry: entry,
    env: secrets,
    clock: systemClock,
    timeoutMs: 1000,
    send: () => Promise.reject(new Error('config check sends nothing upstream')),
  });
}

/** The secrets the service would read from this environment: the master key and every `*Env` key, in any section. */
function missingSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const wanted: Array<[string, string]> = [['OPCO_PROXY_MASTER_KEY', 'required to start outside demo mode']];
  const visit = (value: unknown, path: string[]) => {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (key.endsWith('Env') && typeof child === 'string')
        wanted.push([child, `named by ${[...path, key].join('.')}`]);
      else visit(child, [...path, key]);
    }
  };
  visit(config, []);
  return wanted.filter(([name]) => !env[name]).map(([name, why]) => `${name} is not set in this environment (${why})`);
}

function summarize(config: Config): string[] {
  const opcos = Object.entries(config.opcos).map(([id, entry]) => `${id} (${entry.adapter})`);
  return [
    `listen ${config.host}:${config.port}, mode ${config.mode}, log level ${config.logLevel}`,
    `store ${backend(config.store)}; queue ${backend(config.queue)}`,
    `plugins ${config.plugins.join(', ') || 'none'}`,
    `opcos ${opcos.join(', ') || 'none'}`,
  ];
}

/** `mongodb mongodb://host/ database opco`, `embedded /var/lib/opco-proxy`, `embedded (in memory)`. */
function backend(section: Config['store']): string {
  const { type, url, database, path } = section;
  const where = [
    typeof url === 'string' ? redact(url) : '',
    typeof database === 'string' ? `database ${database}` : '',
    typeof path === 'string' ? path : '',
  ].filter(Boolean);
  return `${type} ${where.join(' ') || (type === 'embedded' ? '(in memory)' : '')}`.trim();
}

/** A URL without its password, for a summary that may end up in a CI log. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}
