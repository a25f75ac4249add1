/**
 * Stopping without cutting anyone off: the server stops accepting connections, idle keep-alive
 * connections are closed, requests in flight are given `graceMs` to finish (their answers ask the
 * client to close the connection), and only then are the connections that remain cut.
 */
import type { Server } from 'node:http';
import type { Clock } from '../clock.js';
import type { InFlight } from './request-context.js';

export async function closeGracefully(
  server: Server,
  inFlight: InFlight,
  graceMs: number,
  clock: Clock,
): Promise<{ cut: number }> {
  inFlight.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  let timer: { cancel(): void } | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = clock.setTimeout(() => resolve('late'), graceMs);
  });
  const outcome = await Promise.race([inFlight.idle().then(() => 'idle' as const), deadline]);
  timer?.cancel();
  const cut = outcome === 'late' ? inFlight.size : 0;
  // Connections kept alive by clients that sent nothing more, and those of requests over time.
  server.closeAllConnections();
  await closed;
  return { cut };
}
