import t, { type Test } from 'tap';
import { startRelay, type Relay } from '@opco-proxy/core/tcp-relay';
import { createStore } from '../src/index.js';

/**
 * /ready relies on ping() rejecting promptly when MongoDB goes away after start-up, whether the
 * connection is refused or the server stops answering on an open one. A TCP relay between the
 * store and the real server plays both outages.
 */
const url = process.env.MONGODB_URL;
/**
 * ping() gives up after the plugin's own 5 s, on a real timer the test cannot move; the bound
 * tells that from the driver's 30 s server selection, with 10 s to spare on a loaded machine.
 */
const LIMIT_MS = 15_000;

async function relayTo(target: URL): Promise<Relay> {
  const relay = await startRelay(target.href, 27017);
  const url = new URL(relay.url);
  url.searchParams.set('directConnection', 'true');
  return { ...relay, url: url.href, connections: relay.connections };
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
    const relay = await relayTo(server);
    const store = await createStore({ url: relay.url });
    t.teardown(() => store.close());
    await store.ping();
    await relay.close();
    await expectPingRejects(t, () => store.ping());
  });

  t.test('ping rejects promptly when the server stops answering', async (t) => {
    const relay = await relayTo(server);
    t.teardown(() => relay.close());
    const store = await createStore({ url: relay.url });
    t.teardown(() => store.close());
    await store.ping();
    relay.freeze(true);
    await expectPingRejects(t, () => store.ping());
    const closing = Date.now();
    await store.close();
    t.ok(Date.now() - closing < LIMIT_MS, 'close does not hang either');
  });
}
