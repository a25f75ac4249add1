// Issue 11, webhooks: what one delivery costs the store and the queue, counted by the MongoDB
// driver's command monitoring on the real server (FerretDB in CI) and on real RabbitMQ. With
// `atomicity: 'server'` the store sends exactly what it sends to MongoDB; FerretDB's lock
// workaround (document-locks.ts) is counted apart and only reported.
import t from 'tap';
import { countedBackends, deliveryRoundTrips, realBackendsSkip } from '../src/index.js';

const WEBHOOKS = 20;
const EVENTS = 5;
/** A delivery's own: its claim and its release (findAndModify each); no read of its webhook. */
const PER_DELIVERY = 2;
/** An event's, whatever its number of webhooks: the subscribers read, one insert, their revisions read again. */
const PER_EVENT = 3;
const DELIVERIES = 'webhook_deliveries';

const skip = realBackendsSkip();
if (skip) t.test('store and queue operations per webhook delivery', { skip }, async () => {});
else {
  t.test(
    `a delivery costs ${PER_DELIVERY} store commands of its own, its event ${PER_EVENT} for all its ${WEBHOOKS} webhooks, and 2 queue operations`,
    async (t) => {
      const backends = await countedBackends('webhook_roundtrips', { atomicity: 'server' });
      t.teardown(() => backends.close());
      const perDelivery = await deliveryRoundTrips(backends, WEBHOOKS, EVENTS);
      t.comment(`per delivery: ${JSON.stringify(perDelivery)}`);
      const own = perDelivery.commands[`findAndModify ${DELIVERIES}`] ?? 0;
      t.equal(own, PER_DELIVERY, 'a claim and a release per delivery');
      const perEvent = (perDelivery.store - own) * WEBHOOKS;
      t.ok(
        perEvent <= PER_EVENT + 1e-9,
        `${perEvent} other store commands per event (at most ${PER_EVENT}): ${JSON.stringify(perDelivery.commands)}`,
      );
      t.equal(
        perDelivery.commands[`insert ${DELIVERIES}`] * WEBHOOKS,
        1,
        "one insert for all of an event's deliveries",
      );
      t.equal(
        (perDelivery.commands['find webhooks'] ?? 0) * WEBHOOKS,
        2,
        'the webhooks are read twice per event, never per delivery',
      );
      t.equal(perDelivery.published, 1, 'one publish per delivery');
      t.equal(perDelivery.settled, 1, 'one ack per delivery');
    },
  );

  t.test('the FerretDB lock workaround, counted', async (t) => {
    const backends = await countedBackends('webhook_roundtrips_lock');
    t.teardown(() => backends.close());
    const perDelivery = await deliveryRoundTrips(backends, WEBHOOKS, 2);
    t.comment(`per delivery with the lock workaround: ${JSON.stringify(perDelivery)}`);
    t.equal(perDelivery.settled, 1, 'one ack per delivery');
  });
}
