import { connect, createServer, type Server, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { createStore } from '../src/index.js';

/**
 * /ready relies on ping() rejecting promptly when MongoDB goes away after start-up, whether the
 * connection is refused or the server stops answering on an open one. A TCP relay between the
 * store and the real server plays both outages.
 */
const url = process.env.MONGODB_URL;
const LIMIT_MS = 8000;

interface Relay {
  url: string;
  /** Stops forwarding in both directions but keeps every connection open. */
  freeze(): void;
  /** Refuses and drops every connection. */
  close(): Promise<void>;
}

async function startRelay(target: URL): Promise<Relay> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 27017), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const relayed = new URL(target.href);
  relayed.host = `127.0.0.1:${port}`;
  relayed.searchParams.set('directConnection', 'true');
  return {
    url: relayed.href,
    freeze: () => {
      frozen = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function expectPingRejects(t: Test, ping: () => Promise<void>): Promise<void> {
  const started = Date.now();
  const error = await ping().then(
    () => undefined,
    (err: unknown) => err,
  );
  const elapsed = Date.now() - started;
  t.ok(error instanceof Error, 'ping rejects');
  t.ok(elapsed < LIMIT_MS, `within ${LIMIT_MS} ms (took ${elapsed} ms)`);
}

let target: URL | undefined;
try {
  target = url ? new URL(url) : undefined;
} catch {
  target = undefined; // several hosts: not a URL the relay can stand in for
}

if (!target) {
  t.plan(0, 'needs MONGODB_URL with a single host; run with MONGODB_URL=mongodb://127.0.0.1:27017/test');
} else {
  const server = target;

  t.test('ping rejects promptly once the server refuses connections', async (t) => {
    const relay = await startRelay(server);
    const store = await createStore({ url: relay.url });
    t.teardown(() => store.close());
    await store.ping();
    await relay.close();
    await expectPingRejects(t, () => store.ping());
  });

  t.test('ping rejects promptly when the server stops answering', async (t) => {
    const relay = await startRelay(server);
    t.teardown(() => relay.close());
    const store = await createStore({ url: relay.url });
    t.teardown(() => store.close());
    await store.ping();
    relay.freeze();
    await expectPingRejects(t, () => store.ping());
    const closing = Date.now();
    await store.close();
    t.ok(Date.now() - closing < LIMIT_MS, 'close does not hang either');
  });
}
