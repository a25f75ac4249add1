/**
 * The `worker` role's one door (issue 31): it serves no API, so without this Prometheus could not
 * read its counters (jobs ended, webhook attempts, upstream calls made for jobs). GET /metrics
 * answers the kernel's registry, as the API's /metrics does; everything else is 404. Nothing
 * here reads a body or a key: a scraper needs none (P1).
 */
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import { listenAt } from './listening-url.js';
import { createGuardedServer, SERVER_LIMITS, type ServerLimits } from './connection-limits.js';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * `limits`: the API's (the config's `server` section), timeouts only: a scraper is one address
 * that keeps its connection, so no per-address cap.
 */
export async function listenForMetrics(
  registry: Registry,
  port: number,
  host: string,
  limits: ServerLimits = SERVER_LIMITS,
): Promise<MetricsListener> {
  const server: Server = createGuardedServer(
    { ...limits, maxConnectionsPerAddress: 0 },
    (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('only GET /metrics is served here\n');
        return;
      }
      registry.metrics().then(
        (body) =>
          res.writeHead(200, { 'Content-Type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body),
        () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics could not be collected\n'),
      );
    },
    { registry },
  );
  return {
    url: await listenAt(server, port, host),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
