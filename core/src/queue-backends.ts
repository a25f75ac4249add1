/** Opens the Queue named by the config (D3): the embedded one in core, or a backend package. */
import { createEmbeddedQueue } from './queue/embedded-queue.js';
import { ConfigError, type Config } from './config.js';
import type { Queue } from './ports/queue.js';
import type { Clock } from './clock.js';

export async function openQueue(config: Config['queue'], clock: Clock): Promise<Queue> {
  if (config.type === 'embedded') return createEmbeddedQueue({ clock });
  let backend: { createQueue(options: { url: string; prefix?: string }): Promise<Queue> };
  try {
    const name = '@opco-proxy/plugin-rabbitmq'; // not a build-time dependency of core
    backend = (await import(name)) as typeof backend;
  } catch {
    throw new ConfigError('invalid configuration: queue.type: "rabbitmq" needs the package @opco-proxy/plugin-rabbitmq');
  }
  return backend.createQueue({ url: config.url, prefix: config.prefix });
}
