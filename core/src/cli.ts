#!/usr/bin/env node
/**
 * opco-proxy serve|api|worker [--config FILE] (D2, D4). Without a config file (no --config, no
 * OPCO_PROXY_CONFIG) it runs demo mode (D1): embedded backends and the sandbox upstream in-process.
 */
import { parseArgs } from 'node:util';
import { ConfigError, readConfigFile, resolveConfig, type ResolvedConfig } from './config.js';
import { createKernel } from './kernel.js';
import { startDemoUpstream } from './demo.js';
import type { ProcessRole } from './plugin.js';

const USAGE = 'usage: opco-proxy serve|api|worker [--config FILE]';
const ROLES: ProcessRole[] = ['serve', 'api', 'worker'];

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.log(USAGE);
  const role = (positionals[0] ?? 'serve') as ProcessRole;
  if (!ROLES.includes(role)) throw new ConfigError(`unknown command "${positionals[0]}"; ${USAGE}`);
  const configPath = values.config ?? process.env.OPCO_PROXY_CONFIG;

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
  if (role === 'worker') {
    kernel.log.info('worker started');
  } else {
    const url = await kernel.listen();
    kernel.log.info({ url, demo: config.demo, store: config.store.type }, `opco-proxy ${role} listening on ${url}`);
    if (config.demo) console.log(`demo mode: try  curl -H 'X-API-KEY: demo-key-123' ${url}/sandbox/dossiers/etats`);
  }
  const keepAlive = role === 'worker' ? setInterval(() => {}, 1 << 30) : undefined;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    kernel.log.info({ signal }, 'shutting down');
    clearInterval(keepAlive);
    await kernel.close();
    await stopDemo();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`opco-proxy: ${err.message}`);
  } else {
    console.error('opco-proxy: failed to start:', err);
  }
  process.exit(1);
});
