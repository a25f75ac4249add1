// The delivery worker's copies of webhooks (known-webhooks.ts): a copy serves only deliveries that say it is current,
// so a change answered on any instance (new URL, secret, switch-off, deletion) holds for the next attempt, and a copy
// never outlives 10 s nor crosses tenants. Changes "behind its back" are written to the store directly.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { createEmbeddedStore, type DomainEvent } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createSealer } from '@opco-proxy/core/application';
import { Deliveries } from '../src/deliveries.js';
import { KnownWebhooks, MAX_AGE_MS } from '../src/known-webhooks.js';
import { WebhookRecords, type WebhookRecord } from '../src/webhook-records.js';

const SECRET = 'c3'.repeat(32);
const TENANT = 'cfa-a';

async function setup(t: Test) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const sealer = createSealer(randomBytes(32));
  const deliveries = new Deliveries(store, clock, 'worker-a');
  // This instance's records and copies, wired as the plugin does, and another instance's records on the same store:
  // its changes raise the deliveries' revisions too, but cannot reach this instance's copies.
  const records = new WebhookRecords(store, sealer);
  const known = new KnownWebhooks(records, clock);
  records.followChanges((id, revision) => {
    known.forget(id);
    return deliveries.follow(id, revision);
  });
  const elsewhere = new WebhookRecords(store, sealer);
  elsewhere.followChanges((id, revision) => deliveries.follow(id, revision));
  const webhooks = store.collection<WebhookRecord>('webhooks');
  const url = (name: string) => `https://${name}.example/hook`;
  /** Changes the stored URL with no revision and no follow: only a read can see it. */
  const behindItsBack = (id: string, name: string) =>
    webhooks.updateMany({ _id: id }, { $set: { callbackUrl: url(name) } });
  const create = (id: string, tenant = TENANT) =>
    records.create({
      _id: id,
      tenant,
      callbackUrl: url('first'),
      events: ['job.completed'],
      secret: SECRET,
      active: true,
      createdAt: clock.date(),
    });
  let n = 0;
  /** A delivery to the webhook as the outbox writes it, with the revision it read, as stored now. */
  const delivery = async (webhookId: string) => {
    const revision = (await records.get(webhookId, TENANT))?.revision ?? 0;
    const event: DomainEvent = {
      id: `ev-${++n}`,
      type: 'job.completed',
      tenant: TENANT,
      opcoId: 'sandbox',
      timestamp: clock.date().toISOString(),
      data: {},
    };
    const [{ id }] = await deliveries.record(event, [{ webhookId, revision }], 0);
    return { id, now: async () => (await deliveries.get(id))! };
  };
  return { clock, records, known, elsewhere, url, behindItsBack, create, delivery, webhooks, sealer };
}

t.test('a delivery gets its webhook and the secrets unsealed; a deleted webhook is null', async (t) => {
  const { clock, records, known, create, delivery } = await setup(t);
  await create('wh-1');
  const d = await delivery('wh-1');
  const found = await known.of(await d.now());
  t.match(found?.webhook, { _id: 'wh-1', tenant: TENANT, callbackUrl: 'https://first.example/hook', revision: 0 });
  t.same(found?.secrets, { current: SECRET });
  await records.rotate('wh-1', TENANT, 'd4'.repeat(32), clock.date());
  const rotated = await known.of(await (await delivery('wh-1')).now());
  const until = new Date(clock.now() + 86_400_000);
  t.same(rotated?.secrets, { current: 'd4'.repeat(32), previous: { secret: SECRET, until } }, 'the old one for 24 h');
  await records.remove('wh-1', TENANT);
  t.equal(await known.of(await d.now()), null);
});

t.test('the copy serves deliveries at its revision; a change answered elsewhere is seen by the next one', async (t) => {
  const { known, elsewhere, url, behindItsBack, create, delivery } = await setup(t);
  await create('wh-1');
  const [a, b] = [await delivery('wh-1'), await delivery('wh-1')];
  t.equal((await known.of(await a.now()))?.webhook.callbackUrl, url('first'));
  await behindItsBack('wh-1', 'unseen');
  t.equal((await known.of(await b.now()))?.webhook.callbackUrl, url('first'), 'served from the copy: no read');
  // Another instance changes the URL: the change raises the revision of b, still unfinished.
  await elsewhere.update('wh-1', TENANT, { callbackUrl: url('moved') });
  const raised = await b.now();
  t.equal(raised.webhookRevision, 1);
  t.equal((await known.of(raised))?.webhook.callbackUrl, url('moved'), 'the copy is behind the delivery: read');
  await behindItsBack('wh-1', 'unseen-again');
  t.equal((await known.of(raised))?.webhook.callbackUrl, url('moved'), 'and the new copy serves it');
});

t.test('a webhook switched off or deleted elsewhere is seen at once by its waiting deliveries', async (t) => {
  const { known, elsewhere, create, delivery } = await setup(t);
  await create('wh-1');
  const [a, b] = [await delivery('wh-1'), await delivery('wh-1')];
  t.equal((await known.of(await a.now()))?.webhook.active, true);
  await elsewhere.update('wh-1', TENANT, { active: false });
  t.equal((await known.of(await a.now()))?.webhook.active, false, 'switched off');
  await elsewhere.remove('wh-1', TENANT);
  t.equal((await b.now()).webhookRevision, Number.MAX_SAFE_INTEGER, 'a deletion raises them above any revision');
  t.equal(await known.of(await b.now()), null, 'deleted');
  t.equal(await known.of({ webhookId: 'wh-1', tenant: TENANT, webhookRevision: 0 }), null, 'and its copy is gone');
});

t.test('a delivery without a revision always has its webhook read', async (t) => {
  const { known, url, behindItsBack, create } = await setup(t);
  await create('wh-1');
  await known.of({ webhookId: 'wh-1', tenant: TENANT, webhookRevision: 0 });
  await behindItsBack('wh-1', 'changed');
  t.equal((await known.of({ webhookId: 'wh-1', tenant: TENANT }))?.webhook.callbackUrl, url('changed'));
});

t.test('a copy is read again once it is 10 s old, whatever the deliveries say', async (t) => {
  const { clock, known, url, behindItsBack, create } = await setup(t);
  await create('wh-1');
  const d = { webhookId: 'wh-1', tenant: TENANT, webhookRevision: 0 };
  await known.of(d);
  await behindItsBack('wh-1', 'changed');
  t.equal(MAX_AGE_MS, 10_000);
  await clock.advance(MAX_AGE_MS - 1);
  t.equal((await known.of(d))?.webhook.callbackUrl, url('first'), 'a moment younger: the copy');
  await clock.advance(1);
  t.equal((await known.of(d))?.webhook.callbackUrl, url('changed'), '10 s old: read');
});

t.test("a copy never serves another tenant's delivery", async (t) => {
  const { known, url, create } = await setup(t);
  await create('wh-1');
  const own = await known.of({ webhookId: 'wh-1', tenant: TENANT, webhookRevision: 0 });
  t.equal(own?.webhook.callbackUrl, url('first'));
  const other = await known.of({ webhookId: 'wh-1', tenant: 'cfa-b', webhookRevision: 0 });
  t.equal(other, null, "not that tenant's webhook: nothing");
});

t.test("forget drops this process's copy at once", async (t) => {
  const { known, url, behindItsBack, create } = await setup(t);
  await create('wh-1');
  const d = { webhookId: 'wh-1', tenant: TENANT, webhookRevision: 0 };
  await known.of(d);
  await behindItsBack('wh-1', 'changed');
  known.forget('wh-1');
  t.equal((await known.of(d))?.webhook.callbackUrl, url('changed'));
});

t.test('at most 1000 copies: the least recently used is forgotten first', async (t) => {
  const { known, url, behindItsBack, webhooks, sealer, clock } = await setup(t);
  const id = (n: number) => `wh-${n}`;
  await webhooks.insertMany(
    Array.from({ length: 1001 }, (_, n) => ({
      _id: id(n),
      tenant: TENANT,
      slot: n,
      callbackUrl: url('first'),
      events: ['job.completed'],
      secret: sealer.seal(SECRET, id(n)),
      active: true,
      createdAt: clock.date(),
      revision: 0,
    })),
  );
  const d = (n: number) => ({ webhookId: id(n), tenant: TENANT, webhookRevision: 0 });
  await known.of(d(0));
  await known.of(d(1));
  await known.of(d(0)); // wh-0 used again: wh-1 is now the least recently used
  for (let n = 2; n <= 1000; n++) await known.of(d(n));
  await behindItsBack(id(0), 'changed');
  await behindItsBack(id(1), 'changed');
  t.equal((await known.of(d(0)))?.webhook.callbackUrl, url('first'), 'used lately: kept');
  t.equal((await known.of(d(1)))?.webhook.callbackUrl, url('changed'), 'least recently used: forgotten, read');
});
