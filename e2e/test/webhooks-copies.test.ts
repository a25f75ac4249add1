// Issue 11: the delivery worker signs and sends from its copies of webhook records (no read of the
// webhook per delivery), yet a change made on another instance (a rotated secret, a new URL, the
// webhook switched off or deleted) holds for every delivery claimed after the change answered.
// Two services share one store and one queue: `api` takes the changes and runs no worker, `worker`
// delivers. A delivery waits for its retry while its webhook changes; the frozen TestClock is
// then moved by 1 s, well within the copies' age limit, so only the deliveries' revisions can
// tell the worker its copy is stale.
import t, { type Test } from 'tap';
import {
  createEmbeddedQueue,
  createEmbeddedStore,
  tenantHash,
  type Collection,
  type Doc,
  type Store,
} from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { eventually, signatureValid, startReceiver, startService, KEY_A } from '../src/index.js';

const clock = new TestClock({ frozen: true });
const store = await createEmbeddedStore();
const queue = createEmbeddedQueue({ clock });
/** Runs once right before the api's next insert of deliveries (after its outbox read the subscribers). */
let beforeInsert: (() => Promise<void>) | undefined;
const api = await startService({ store: pausingBeforeInsert(store), queue, clock, role: 'api' });
const worker = await startService({ store, queue, clock, upstream: api.sandbox });
const receiver = await startReceiver({ status: 200 }, clock);
t.teardown(async () => {
  await worker.close();
  await api.close();
  await receiver.close();
  await queue.close();
  await store.close();
});

const deliveries = store.collection<{ _id: string; status: string; attempts: number; error: string | null }>(
  'webhook_deliveries',
);
const at = (path: string) => receiver.received.filter((r) => r.path === path);
type SyncEvent = 'sync.started' | 'sync.completed' | 'sync.failed' | 'sync.cancelled' | 'sync.batch';
const emit = (type: SyncEvent, syncId: string) =>
  api.kernel.emit({ type, tenant: tenantHash(KEY_A), opcoId: 'sandbox', data: { syncId } });

/**
 * A webhook whose copy the worker holds (one notification delivered), and a second notification's
 * delivery waiting for its retry (its first attempt answered 503); returns the webhook and that
 * delivery's id. Each webhook has an event type of its own, so that no other takes the 503.
 */
async function waitingDelivery(
  path: string,
  event: SyncEvent,
): Promise<{ hook: { id: string; secret: string }; deliveryId: string }> {
  const reply = await api.request('POST', '/webhooks', {
    body: { callbackUrl: `${receiver.url}${path}`, events: [event] },
  });
  if (reply.status !== 201) throw new Error(reply.text);
  await emit(event, `${path}-1`);
  await eventually(() => at(path).length === 1, `the first notification to ${path}`);
  receiver.script.push({ status: 503 });
  await emit(event, `${path}-2`);
  await eventually(() => at(path).length === 2, `the second notification to ${path}`);
  const deliveryId = String(at(path)[1].headers['svc-delivery-id']);
  await eventually(
    async () => (await deliveries.findOne({ _id: deliveryId }))?.status === 'retrying',
    'its retry scheduled',
  );
  return { hook: reply.body, deliveryId };
}

async function ended(deliveryId: string): Promise<{ status: string; error: string | null }> {
  return eventually(async () => {
    const delivery = await deliveries.findOne({ _id: deliveryId });
    return delivery && ['delivered', 'failed'].includes(delivery.status) ? delivery : undefined;
  }, `delivery ${deliveryId} ended`);
}

t.test('a rotated secret signs the next attempt', async (t: Test) => {
  const { hook, deliveryId } = await waitingDelivery('/rotated', 'sync.started');
  const rotated = await api.request('POST', `/webhooks/${hook.id}/rotate-secret`);
  t.equal(rotated.status, 200);
  await clock.advance(1000);
  t.equal((await ended(deliveryId)).status, 'delivered');
  const retry = at('/rotated')[2];
  t.ok(signatureValid(rotated.body.secret, retry), "Svc-Signature is the new secret's");
  t.ok(
    signatureValid(hook.secret, {
      ...retry,
      headers: { ...retry.headers, 'svc-signature': retry.headers['svc-signature-previous'] },
    }),
    'the old one signs beside it',
  );
});

t.test('a new callback URL takes the next attempt', async (t: Test) => {
  const { hook, deliveryId } = await waitingDelivery('/before', 'sync.completed');
  t.equal(
    (await api.request('PATCH', `/webhooks/${hook.id}`, { body: { callbackUrl: `${receiver.url}/after` } })).status,
    200,
  );
  await clock.advance(1000);
  t.equal((await ended(deliveryId)).status, 'delivered');
  t.equal(at('/after').length, 1, 'sent to the new URL');
  t.equal(at('/before').length, 2, 'not to the old one');
});

t.test('a webhook switched off or deleted sends nothing more', async (t: Test) => {
  const off = await waitingDelivery('/off', 'sync.failed');
  const gone = await waitingDelivery('/gone', 'sync.cancelled');
  t.equal((await api.request('PATCH', `/webhooks/${off.hook.id}`, { body: { active: false } })).status, 200);
  t.equal((await api.request('DELETE', `/webhooks/${gone.hook.id}`)).status, 200);
  await clock.advance(1000);
  t.match(await ended(off.deliveryId), { status: 'failed', error: 'webhook deactivated' });
  t.match(await ended(gone.deliveryId), { status: 'failed', error: 'webhook deleted' });
  t.equal(at('/off').length, 2, 'no third notification to the switched-off webhook');
  t.equal(at('/gone').length, 2, 'none to the deleted one');
});

t.test("a change between the outbox's read of the subscribers and its insert holds too", async (t: Test) => {
  const reply = await api.request('POST', '/webhooks', {
    body: { callbackUrl: `${receiver.url}/raced`, events: ['sync.batch'] },
  });
  const hook = reply.body as { id: string; secret: string };
  await emit('sync.batch', 'raced-1');
  await eventually(() => at('/raced').length === 1, 'the first notification: the worker holds a copy');
  let rotated: { secret: string } | undefined;
  beforeInsert = async () => {
    rotated = (await api.request('POST', `/webhooks/${hook.id}/rotate-secret`)).body;
  };
  await emit('sync.batch', 'raced-2');
  t.ok(rotated, 'rotated after the subscribers were read, before the deliveries were written');
  const [, second] = await eventually(() => at('/raced').length === 2 && at('/raced'), 'the second notification');
  t.ok(signatureValid(rotated!.secret, second), 'signed with the new secret');
});

/** The store, with `beforeInsert` run before an insert of deliveries. */
function pausingBeforeInsert(inner: Store): Store {
  return Object.assign(Object.create(inner) as Store, {
    collection<T extends Doc>(name: string): Collection<T> {
      const collection = inner.collection<T>(name);
      if (name !== 'webhook_deliveries') return collection;
      return Object.assign(Object.create(collection) as Collection<T>, {
        async insertMany(docs: T[]) {
          const hook = beforeInsert;
          beforeInsert = undefined;
          await hook?.();
          return collection.insertMany(docs);
        },
      });
    },
  });
}
