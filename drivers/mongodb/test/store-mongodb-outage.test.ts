import t, { type Test } from 'tap';
import { MongoClient } from 'mongodb';
import { StoreUnavailableError } from '@opco-proxy/core';
import { startRelay, type Relay } from '@opco-proxy/core/tcp-relay';
import { createStore } from '../src/index.js';

/**
 * /ready relies on ping() rejecting promptly when MongoDB goes away after start-up, whether the
 * connection is refused or the server stops answering on an open one. A TCP relay between the
 * store and the real server plays both outages, and a connection cut in the middle of a
 * findOneAndUpdate (what a change of primary does to a command in flight, P18).
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

  const cuts = `relay_cuts_${process.pid}`;
  t.teardown(async () => {
    const client = await MongoClient.connect(server.href);
    await client
      .db()
      .collection(cuts)
      .drop()
      .catch(() => undefined);
    await client.close();
  });

  // A lost request (the command never ran) and a lost reply (it ran, its acknowledgement lost),
  // through the lease FerretDB needs and through the server's own findAndModify (MongoDB's).
  for (const atomicity of ['lock', 'server'] as const) {
    for (const at of ['request', 'reply'] as const) {
      t.test(`a findOneAndUpdate whose ${at} is lost applies once (${atomicity})`, async (t) => {
        const relay = await relayTo(server);
        t.teardown(() => relay.close());
        const store = await createStore({ url: relay.url, atomicity });
        t.teardown(() => store.close());
        const jobs = store.collection<{ _id: string; status: string; claims: number }>(cuts);
        const _id = `job-${atomicity}-${at}`;
        await jobs.insertOne({ _id, status: 'queued', claims: 0 });
        let cutMade = false;
        void relay
          .interrupt((chunk) => chunk.includes('findAndModify') && chunk.includes(cuts), at)
          .then(() => (cutMade = true));
        // Conditional, like every claim and write under a lease: once applied, it matches no more.
        const claim = () =>
          jobs.findOneAndUpdate({ _id, status: 'queued' }, { $set: { status: 'processing' }, $inc: { claims: 1 } });
        const first = await claim().then(
          (doc) => ({ doc }),
          (error: unknown) => ({ error }),
        );
        t.ok(cutMade, 'the connection was cut in the middle of the command');
        if ('error' in first) {
          // A standalone server (FerretDB): the driver does not retry writes, the store says why.
          t.ok(first.error instanceof StoreUnavailableError, `fails as the store unavailable: ${String(first.error)}`);
          t.equal(
            (await jobs.findOne({ _id }))?.claims,
            at === 'reply' ? 1 : 0,
            at === 'reply' ? 'applied, its answer lost' : 'not applied',
          );
          // The caller's next try finds the document claimed already, or claims it now.
          const second = await claim();
          t.equal(
            second?.status ?? 'already claimed',
            at === 'reply' ? 'already claimed' : 'processing',
            'the next try',
          );
        } else {
          // A replica set: the driver retried once on a new connection, the server recognising it.
          t.equal(first.doc?.status, 'processing', 'the retried call succeeds');
        }
        t.equal((await jobs.findOne({ _id }))?.claims, 1, 'applied exactly once');
      });
    }
  }
}
