/**
 * The URL a server listening here is reached at, as the service and its metrics listener print
 * it: an IPv6 address in brackets, the wildcard address shown as loopback (what a local client
 * would dial).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';

/** Starts `server` listening on `port` and `host`; resolves with its URL once it listens. */
export async function listenAt(server: Server, port: number, host: string): Promise<string> {
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`;
}
