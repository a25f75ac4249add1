import { createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { createQueue } from '../src/index.js';

/**
 * Start-up and /ready must fail fast when RabbitMQ is not there, whatever the failure looks like.
 * The plugin gives up after its own 5 s timeout, on a real timer the test cannot move;
 * the bound tells that from a connection left to hang (amqplib has no timeout of its own), with 10 s
 * to spare on a loaded machine.
 */
const LIMIT_MS = 15_000;

async function expectFastRejection(t: Test, url: string): Promise<void> {
  const logged: string[] = [];
  const log = (data: object, message: string) => logged.push(`${message} ${JSON.stringify(data)}`);
  const started = Date.now();
  const error = await createQueue({ url, logger: { info: log, warn: log, error: log } }).then(
    async (queue) => {
      await queue.close();
      return undefined;
    },
    (err: unknown) => err as Error,
  );
  const elapsed = Date.now() - started;
  t.ok(error instanceof Error, 'createQueue rejects');
  t.ok(elapsed < LIMIT_MS, `within ${LIMIT_MS} ms (took ${elapsed} ms)`);
  t.notMatch(error?.message ?? '', /s3cret/, 'the message does not carry the password');
  t.notMatch(logged.join('\n'), /s3cret/, 'nor do the logs');
}

t.test('a port where nothing listens', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await expectFastRejection(t, `amqp://user:s3cret@127.0.0.1:${port}`);
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
  await expectFastRejection(t, `amqp://user:s3cret@127.0.0.1:${port}`);
});

t.test('a server that hangs up at once', async (t) => {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as { port: number };
  await expectFastRejection(t, `amqp://user:s3cret@127.0.0.1:${port}`);
});
