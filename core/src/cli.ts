#!/usr/bin/env node
/**
 * opco-proxy serve|api|worker [--config FILE] (D2, D4). Without a config file (no --config, no
 * OPCO_PROXY_CONFIG) it runs demo mode (D1): embedded backends and the sandbox upstream
 * in-process, listening on 127.0.0.1 unless HOST says otherwise. SIGTERM or SIGINT stop it
 * gracefully (P3); a second signal stops it at once.
 */
import { parseArgs } from 'node:util';
import { ConfigError, readConfigFile, resolveConfig, type ResolvedConfig } from './config.js';
import { createKernel } from './kernel.js';
import { startDemoUpstream } from './demo.js';
import type { ProcessRole } from './plugin.js';

const USAGE = 'usage: opco-proxy serve|api|worker|hub [--config FILE]';
const ROLES: ProcessRole[] = ['serve', 'api', 'worker'];

interface HubModule {
  runHub(configPath: string, env: NodeJS.ProcessEnv): Promise<{ url: string; close(): Promise<void> }>;
}

/** D28: the rate-limit coordinator, from the hub plugin's package (not a build-time dependency of core). */
async function runHubRole(configPath: string | undefined): Promise<void> {
  if (!configPath) throw new ConfigError(`the hub needs a config file (--config FILE or OPCO_PROXY_CONFIG); ${USAGE}`);
  const name = '@opco-proxy/plugin-hub';
  const { runHub } = (await import(name)) as HubModule;
  const hub = await runHub(configPath, process.env);
  console.log(`opco-proxy hub listening on ${hub.url}`);
  stopOnSignals(() => hub.close(), (message, fields) => console.log(message, JSON.stringify(fields)));
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.log(USAGE);
  const configPath = values.config ?? process.env.OPCO_PROXY_CONFIG;
  if (positionals[0] === 'hub') return runHubRole(configPath);
  const role = (positionals[0] ?? 'serve') as ProcessRole;
  if (!ROLES.includes(role)) throw new ConfigError(`unknown command "${positionals[0]}"; ${USAGE}`);

  let config: ResolvedConfig;
  let stopDemo = async () => {};
  if (configPath) {
    config = resolveConfig(readConfigFile(configPath));
  } else {
    const demo = await startDemoUpstream();
    stopDemo = demo.close;
    config = resolveConfig(demo.config, { ...process.env, ...demo.env }, { demo: true });
  }

  const kernel = await createKernel(config, { role });
  const stop = stopOnSignals(async () => {
    await kernel.close();
    await stopDemo();
  }, (message, fields) => kernel.log.info(fields, message));
  if (role === 'worker') {
    kernel.log.info('worker started');
  } else {
    const url = await kernel.listen();
    kernel.log.info({ url, host: config.host, demo: config.demo, store: config.store.type }, `opco-proxy ${role} listening on ${url}`);
    if (config.demo) {
      console.log(
        `demo mode (development: any API key, loopback webhook targets allowed), listening on ${config.host} (HOST overrides)\n` +
          `try  curl -H 'X-API-KEY: demo-key-123' ${url}/sandbox/dossiers/etats\n` +
          `API reference ${url}/docs, operator console ${url}/console (operator key ${config.adminKey})`,
      );
    }
  }
  stop.keepAlive(role === 'worker');
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

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`opco-proxy: ${err.message}`);
  } else {
    console.error('opco-proxy: failed to start:', err);
  }
  process.exit(1);
});
