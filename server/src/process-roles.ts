/**
 * The process roles (D4): `serve`, `api`, `worker` run the kernel from a config file, or demo
 * mode (D1) without one; `hub` runs the rate-limit coordinator (D28). SIGTERM or SIGINT stop a
 * role gracefully (P3); a second signal stops it at once.
 */
import { existsSync } from 'node:fs';
import { ConfigError, type ProcessRole } from '@opco-proxy/core';
import {
  createKernel,
  readConfigFile,
  resolveConfig,
  type ConfigFlags,
  type ResolvedConfig,
} from '@opco-proxy/core/application';
import { startDemoUpstream } from './demo.js';
import { BUNDLED, applicationModules } from './bundle.js';
import { CONFIG_PARTS } from './config-parts.js';
import { releaseYoungGeneration } from './young-generation.js';

export interface RoleOptions extends ConfigFlags {
  /** The config file; absent, `serve`, `api` and `worker` run demo mode. */
  config?: string;
}

export async function runRole(role: ProcessRole, options: RoleOptions): Promise<void> {
  const { config: configPath, ...flags } = options;
  let config: ResolvedConfig;
  let stopDemo = async () => {};
  if (configPath) {
    if (!existsSync(configPath)) throw new ConfigError(missingConfig(configPath));
    config = resolveConfig(readConfigFile(configPath), process.env, { flags, parts: CONFIG_PARTS });
  } else {
    const demo = await startDemoUpstream();
    stopDemo = () => demo.close();
    try {
      config = resolveConfig(demo.config, { ...process.env, ...demo.env }, { demo: true, flags, parts: CONFIG_PARTS });
    } catch (err) {
      await stopDemo();
      throw err;
    }
  }

  const kernel = await createKernel(config, { role, bundled: applicationModules(configPath) });
  const stop = stopOnSignals(
    async () => {
      await kernel.close();
      await stopDemo();
    },
    (message, fields) => kernel.log.info(fields, message),
  );
  if (role === 'worker') {
    const metrics =
      config.metricsPort === undefined ? undefined : `${await kernel.listenMetrics(config.metricsPort)}/metrics`;
    kernel.log.info({ metrics }, 'worker started');
  } else {
    const url = await kernel.listen();
    kernel.log.info(
      { url, host: config.host, demo: config.demo, store: config.store.type },
      `opco-proxy ${role} listening on ${url}`,
    );
    if (config.demo) {
      console.log(
        `demo mode (development: any API key, loopback webhook targets allowed), listening on ${config.host} (HOST overrides)\n` +
          `try  curl -H 'X-API-KEY: demo-key-123' ${url}/sandbox/dossiers/etats\n` +
          `API reference ${url}/docs, operator console ${url}/console (operator key ${config.adminKey})`,
      );
    }
  }
  stop.keepAlive(role === 'worker');
  releaseYoungGeneration();
}

/** What a first start without its config file says: where the file is looked for, and the two ways on. */
function missingConfig(path: string): string {
  const from = process.env.OPCO_PROXY_CONFIG === path ? ' (OPCO_PROXY_CONFIG)' : '';
  return (
    `no config file at ${path}${from}. Write one (docs/configuration.md; deploy/config.json is a start) and mount it there ` +
    `(docker run -v ./config.json:${path}:ro ...), or try demo mode first: opco-proxy demo (docker run -p 8080:8080 IMAGE demo)`
  );
}

/** D28: the rate-limit coordinator, loaded only by this role. */
export async function runHubRole(options: RoleOptions): Promise<void> {
  const { config: configPath, ...flags } = options;
  if (!configPath)
    throw new ConfigError(
      'the hub needs a config file (--config FILE or OPCO_PROXY_CONFIG); see opco-proxy hub --help',
    );
  const { runHub } = await import('@opco-proxy/hub-server');
  const hub = await runHub(configPath, process.env, { flags, drivers: BUNDLED });
  console.log(`opco-proxy hub listening on ${hub.url}`);
  releaseYoungGeneration();
  stopOnSignals(
    () => hub.close(),
    (message, fields) => console.log(message, JSON.stringify(fields)),
  );
}

/** First signal: graceful stop, then exit 0. Second signal: exit at once. */
function stopOnSignals(close: () => Promise<void>, log: (message: string, fields: Record<string, unknown>) => void) {
  let keepAlive: NodeJS.Timeout | undefined;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log('second signal: stopping at once', { signal });
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    log('shutting down gracefully', { signal });
    close().then(
      () => {
        clearInterval(keepAlive);
        process.exit(0);
      },
      (err: unknown) => {
        console.error('opco-proxy: failed to stop cleanly:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    /** A worker has no server to keep the event loop alive. */
    keepAlive(needed: boolean) {
      if (needed) keepAlive = setInterval(() => {}, 1 << 30);
    },
  };
}
