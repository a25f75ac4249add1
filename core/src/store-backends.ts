/** Opens the Store named by the config (D3): the embedded one in core, or a backend package. */
import { createEmbeddedStore } from './store/embedded-store.js';
import { ConfigError, type Config } from './config.js';
import type { Store } from './ports/store.js';

export async function openStore(config: Config['store']): Promise<Store> {
  if (config.type === 'embedded') return createEmbeddedStore({ path: config.path });
  let backend: { createStore(options: { url: string; database?: string }): Promise<Store> };
  try {
    const name = '@opco-proxy/plugin-mongodb'; // not a build-time dependency of core
    backend = (await import(name)) as typeof backend;
  } catch {
    throw new ConfigError('invalid configuration: store.type: "mongodb" needs the package @opco-proxy/plugin-mongodb');
  }
  return backend.createStore({ url: config.url, database: config.database });
}
