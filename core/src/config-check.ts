/**
 * `opco-proxy config check FILE`: the checks start-up makes, without starting anything, and with
 * every problem listed rather than the first. The file is checked with the environment's and the
 * flags' overrides applied (what the service would run with); secrets are not needed to check a
 * file, so a missing one is a warning here (start-up refuses it).
 */
import { systemClock } from './clock.js';
import { ConfigError } from './config-error.js';
import { checkConfig, readConfigFile, type Config, type ConfigFlags } from './config.js';
import { loadPlugins } from './plugin.js';
import { OpcoDirectory } from './opco-registry.js';
import { oauthClientCredentials } from './upstream-auth/oauth-client-credentials.js';

export interface ConfigReport {
  /** `dotted.path: problem`, one per problem. */
  errors: string[];
  /** Secrets this environment lacks: not errors of the file. */
  warnings: string[];
  /** One line per section of the config the service would run with (when there is no error). */
  summary: string[];
}

const BACKEND_PACKAGES = { store: ['mongodb', '@opco-proxy/plugin-mongodb'], queue: ['rabbitmq', '@opco-proxy/plugin-rabbitmq'] } as const;

export async function checkConfigFile(path: string, env: NodeJS.ProcessEnv = process.env, flags: ConfigFlags = {}): Promise<ConfigReport> {
  let raw: unknown;
  try {
    raw = readConfigFile(path);
  } catch (err) {
    if (err instanceof ConfigError) return { errors: [err.message], warnings: [], summary: [] };
    throw err;
  }
  const checked = checkConfig(raw, env, flags);
  if (!checked.config) return { errors: checked.errors, warnings: [], summary: [] };
  const config = checked.config;
  const errors = [...checked.errors, ...(await packageErrors(config))];
  return { errors, warnings: missingSecrets(config, env), summary: errors.length > 0 ? [] : summarize(config) };
}

/** Adapters, plugins and backends are packages: each named one must be installed and be what it claims. */
async function packageErrors(config: Config): Promise<string[]> {
  const errors: string[] = [];
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      errors.push(err.message.replace(/^invalid configuration: /, ''));
    }
  };
  for (const [opcoId, entry] of Object.entries(config.opcos)) await attempt(() => checkOpco(opcoId, entry));
  await attempt(() => loadPlugins(config.plugins));
  for (const key of ['store', 'queue'] as const) {
    const [type, name] = BACKEND_PACKAGES[key];
    if (config[key].type !== type) continue;
    await attempt(async () => {
      try {
        await import(name);
      } catch {
        throw new ConfigError(`${key}.type: "${type}" needs the package ${name}`);
      }
    });
  }
  return errors;
}

/**
 * The opco's adapter and its authentication keys, as start-up reads them. Secrets are not needed
 * to check a file: the strategy is shown a stand-in for each one this environment lacks, and
 * sends nothing (a strategy fetches tokens on the first call, not at setup).
 */
async function checkOpco(opcoId: string, entry: Config['opcos'][string]): Promise<void> {
  const [opco] = (await OpcoDirectory.load({ [opcoId]: entry }, systemClock)).list();
  const strategy = opco.profile.auth ?? oauthClientCredentials();
  const env = new Proxy({}, { get: (_target, name) => (typeof name === 'string' ? process.env[name] || 'stand-in' : undefined) });
  strategy.setup({
    opcoId, adapter: entry.adapter, entry: entry, env, clock: systemClock, timeoutMs: 1000,
    send: () => Promise.reject(new Error('config check sends nothing upstream')),
  });
}

/** The secrets the service would read from this environment: the master key and every `*Env` key. */
function missingSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const wanted: Array<[string, string]> = [['OPCO_PROXY_MASTER_KEY', 'required to start outside demo mode']];
  for (const [opcoId, entry] of Object.entries(config.opcos)) {
    for (const [key, value] of Object.entries(entry)) if (key.endsWith('Env') && typeof value === 'string') wanted.push([value, `named by opcos.${opcoId}.${key}`]);
  }
  if (config.hub) wanted.push([config.hub.apiKeyEnv, 'named by hub.apiKeyEnv']);
  return wanted.filter(([name]) => !env[name]).map(([name, why]) => `${name} is not set in this environment (${why})`);
}

function summarize(config: Config): string[] {
  const store = config.store.type === 'mongodb' ? `mongodb ${redact(config.store.url)}${config.store.database ? ` database ${config.store.database}` : ''}` : `embedded${config.store.path ? ` ${config.store.path}` : ' (in memory)'}`;
  const queue = config.queue.type === 'rabbitmq' ? `rabbitmq ${redact(config.queue.url)}` : 'embedded';
  const opcos = Object.entries(config.opcos).map(([id, entry]) => `${id} (${entry.adapter})`);
  return [
    `listen ${config.host}:${config.port}, mode ${config.mode}, log level ${config.logLevel}`,
    `store ${store}; queue ${queue}`,
    `plugins ${config.plugins.join(', ') || 'none'}`,
    `opcos ${opcos.join(', ') || 'none'}`,
  ];
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
