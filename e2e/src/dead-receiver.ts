/**
 * A webhook receiver that never answers (issue 38 point 4): a TCP server that accepts every
 * connection, reads what comes and writes nothing, until the test closes it.
 */
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface DeadReceiver {
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections open now (attempts waiting on it). */
  open(): number;
  close(): Promise<void>;
}

export async function startDeadReceiver(): Promise<DeadReceiver> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    open: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
