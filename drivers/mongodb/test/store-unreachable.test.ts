import { createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { createStore } from '../src/index.js';

/**
 * Start-up and /ready must fail fast when MongoDB is not there, whatever the failure looks like.
 * The plugin gives up after its own 5 s timeout, on a real timer the test cannot move;
 * the bound tells that from the driver's own 30 s, with 10 s to spare on a loaded machine.
 */
const LIMIT_MS = 15_000;

async function expectFastRejection(t: Test, url: string): Promise<void> {
  const started = Date.now();
  const error = await createStore({ url }).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (err: unknown) => err as Error,
  );
  const elapsed = Date.now() - started;
  t.ok(error instanceof Error, 'createStore rejects');
  t.ok(elapsed < LIMIT_MS, `within ${LIMIT_MS} ms (took ${elapsed} ms)`);
  t.notMatch(error?.message ?? '', /s3cret/, 'the message does not carry the password');
}

t.test('a port where nothing listens', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await expectFastRejection(t, `mongodb://user:s3cret@127.0.0.1:${port}/x?directConnection=true`);
});

t.test('a server that accepts connections and never answers', async (t) => {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  await expectFastRejection(t, `mongodb://user:s3cret@127.0.0.1:${port}/x?directConnection=true`);
});
