/**
 * What `opco-proxy` ships (issue 29): the drivers, plugins and adapters this application depends
 * on as ordinary packages. Each is an `import()` of a literal name, so the compiler checks every
 * edge while a process loads only what its config names; the kernel (`@opco-proxy/core`) knows
 * none of them. A name the config gives that is not here is imported by package name (D3).
 */
import { dirname, resolve } from 'node:path';
import type { Bundled } from '@opco-proxy/core/application';

export const BUNDLED: Bundled = {
  stores: {
    mongodb: async () => (await import('@opco-proxy/driver-mongodb')).storeDriver,
  },
  queues: {
    rabbitmq: async () => (await import('@opco-proxy/driver-rabbitmq')).queueDriver,
  },
  plugins: {
    '@opco-proxy/plugin-cache': () => import('@opco-proxy/plugin-cache'),
    '@opco-proxy/plugin-jobs': () => import('@opco-proxy/plugin-jobs'),
    '@opco-proxy/plugin-webhooks': () => import('@opco-proxy/plugin-webhooks'),
    '@opco-proxy/plugin-sync': () => import('@opco-proxy/plugin-sync'),
    '@opco-proxy/plugin-hub': () => import('@opco-proxy/plugin-hub'),
    '@opco-proxy/plugin-otel': () => import('@opco-proxy/plugin-otel'),
    '@opco-proxy/plugin-console': () => import('@opco-proxy/plugin-console'),
  },
  adapters: {
    '@opco-proxy/adapter-common-api': () => import('@opco-proxy/adapter-common-api'),
    '@opco-proxy/adapter-classic-api': () => import('@opco-proxy/adapter-classic-api'),
    '@opco-proxy/adapter-sandbox': () => import('@opco-proxy/adapter-sandbox'),
  },
};

/**
 * The bundle, and where an operator installs the other packages a config names: the directory
 * holding the config file, then the working directory (so `npx opco-proxy serve --config
 * config.json` finds the adapters installed beside the config). docs/adapters.md gives the order.
 */
export function applicationModules(configPath?: string, cwd = process.cwd()): Bundled {
  const dirs = configPath ? [dirname(resolve(cwd, configPath)), cwd] : [cwd];
  return { ...BUNDLED, lookupDirs: [...new Set(dirs)] };
}
