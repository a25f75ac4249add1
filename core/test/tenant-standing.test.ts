// Issue 27: what the upstream said of a key, per opcoId, shared through the store, with lifetimes.
import t from 'tap';
import { createEmbeddedStore, TenantStanding, TestClock, LOCAL_RECHECK_MS } from '../src/application.js';

const options = { provenTtlS: 86_400, refusedTtlS: 300 };
const TENANT = 'a'.repeat(64);

t.test('unknown keys are unproven; accepted ones proven at that opcoId only, for provenTtlS', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const standing = new TenantStanding(store, clock, options);
  t.equal(await standing.of('acme', TENANT), 'unproven');
  t.equal(await standing.of(undefined, TENANT), 'unproven', 'proven nowhere');
  await standing.accepted('acme', TENANT);
  t.equal(await standing.of('acme', TENANT), 'proven');
  t.equal(await standing.of('other', TENANT), 'unproven', 'a key is proven per upstream');
  t.equal(standing.known(undefined, TENANT), 'proven', 'and proven somewhere, for routes that name no opcoId');
  await clock.advance(86_400_000 + 1);
  t.equal(await standing.of('acme', TENANT), 'unproven', 'after its lifetime');
});

t.test(
  'a refused key is answered 403 for refusedTtlS, then tried again; a proven key refused loses its proof',
  async (t) => {
    const store = await createEmbeddedStore({});
    t.teardown(() => store.close());
    const clock = new TestClock({ frozen: true });
    const hits: string[] = [];
    const standing = new TenantStanding(store, clock, options, (opcoId) => hits.push(opcoId));
    await standing.accepted('acme', TENANT);
    await standing.refused('acme', TENANT, true);
    const err = await standing
      .assertNotRefused('acme', TENANT)
      .catch((e: unknown) => e as { code: string; status: number; message: string });
    t.match(err, { code: 'HTTP_ERROR', status: 403, message: /300 s/ });
    t.same(hits, ['acme'], 'the local answer is counted');
    t.equal(await standing.assertNotRefused('other', TENANT), 'unproven', 'other upstreams are not concerned');
    await clock.advance(300_000);
    t.equal(
      await standing.assertNotRefused('acme', TENANT),
      'unproven',
      'tried again once the period ends: neither refused nor proven',
    );
  },
);

t.test('every instance learns what one learned, within LOCAL_RECHECK_MS', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const one = new TenantStanding(store, clock, options);
  const two = new TenantStanding(store, clock, options);
  await one.prepare();
  t.equal(await two.of('acme', TENANT), 'unproven');
  await one.accepted('acme', TENANT);
  t.equal(await two.of('acme', TENANT), 'unproven', 'two trusts what it read a moment ago');
  await clock.advance(LOCAL_RECHECK_MS);
  t.equal(await two.of('acme', TENANT), 'proven', 'then reads the store again');
  t.equal(await two.of(undefined, TENANT), 'proven', 'proven somewhere, read from the store');
  await one.refused('acme', TENANT, true);
  await clock.advance(LOCAL_RECHECK_MS);
  t.equal(await two.of('acme', TENANT), 'refused');
});

t.test('an accepted key is written once per half lifetime, not at every call', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const standing = new TenantStanding(store, clock, options);
  const docs = store.collection<{ _id: string; expiresAt: Date }>('tenant_standing');
  await standing.accepted('acme', TENANT);
  const first = (await docs.find({}))[0].expiresAt.getTime();
  await clock.advance(1000);
  await standing.accepted('acme', TENANT);
  t.equal((await docs.find({}))[0].expiresAt.getTime(), first, 'not written again');
  await clock.advance(43_200_000);
  await standing.accepted('acme', TENANT);
  t.ok((await docs.find({}))[0].expiresAt.getTime() > first, 'renewed past half its lifetime');
  await clock.advance(72_000_000);
  t.equal(await standing.sweep(), 0, 'still alive 20 h later: renewed');
  await clock.advance(72_000_000);
  t.equal(await standing.sweep(), 1, 'swept once expired');
});

t.test('an unproven key sent many times at once: one call goes, the others wait for what it learns', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const standing = new TenantStanding(store, new TestClock({ frozen: true }), options);
  const first = await standing.claim('acme', TENANT);
  t.equal(first.standing, 'unproven');
  let secondSettled = false;
  const second = standing
    .claim('acme', TENANT)
    .then(
      (claim) => ({ claim }),
      (err: unknown) => ({ err: err as { code: string } }),
    )
    .finally(() => (secondSettled = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(secondSettled, 'the second waits while the first is on its way');
  await standing.refused('acme', TENANT, true);
  first.done();
  t.match(await second, { err: { code: 'HTTP_ERROR' } }, 'and is refused with what the first learned, without a call');
  const proven = 'b'.repeat(64);
  await standing.accepted('acme', proven);
  const claims = await Promise.all([standing.claim('acme', proven), standing.claim('acme', proven)]);
  t.same(
    claims.map((c) => c.standing),
    ['proven', 'proven'],
    'proven keys never wait for one another',
  );
});

t.test('known() answers at once past the recheck time and reads the store again behind it', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const one = new TenantStanding(store, clock, options);
  const two = new TenantStanding(store, clock, options);
  await one.accepted('acme', TENANT);
  t.equal(await two.of('acme', TENANT), 'proven');
  await one.refused('acme', TENANT, true);
  await clock.advance(LOCAL_RECHECK_MS);
  t.equal(two.known('acme', TENANT), 'proven', 'the answer of the moment, without waiting for the store');
  // The read behind it is the embedded store's: a few turns of the event loop.
  for (let turn = 0; turn < 1000 && two.known('acme', TENANT) !== 'refused'; turn++)
    await new Promise((resolve) => setImmediate(resolve));
  t.equal(two.known('acme', TENANT), 'refused', 'then what the store says');
});

// Issue 37: a 403 about one request is not a refusal of a key the upstream accepted.
t.test(
  'a proven key is held refused only after forbiddenInARow 403s to distinct requests, none accepted between them',
  async (t) => {
    const store = await createEmbeddedStore({});
    t.teardown(() => store.close());
    const clock = new TestClock({ frozen: true });
    const refusals: Array<{ tenant: string; wasProven: boolean }> = [];
    const standing = new TenantStanding(store, clock, { ...options, forbiddenInARow: 3 });
    standing.onRefusal(({ tenant, wasProven }) => refusals.push({ tenant, wasProven }));
    await standing.accepted('acme', TENANT);
    t.equal(await standing.forbidden('acme', TENANT, 'dossier-1', true), false, 'one 403 refuses that request only');
    t.equal(
      await standing.forbidden('acme', TENANT, 'dossier-1', true),
      false,
      'the same request refused again counts once',
    );
    t.equal(await standing.assertNotRefused('acme', TENANT), 'proven', 'the key stays proven');
    t.equal(await standing.forbidden('acme', TENANT, 'dossier-2', true), false, 'two distinct requests');
    await standing.accepted('acme', TENANT);
    t.equal(
      await standing.forbidden('acme', TENANT, 'dossier-3', true),
      false,
      'an accepted answer between them starts a new series',
    );
    t.equal(await standing.forbidden('acme', TENANT, 'dossier-4', true), false);
    t.same(refusals, [], 'no refusal yet');
    t.equal(
      await standing.forbidden('acme', TENANT, 'dossier-5', true),
      true,
      'the third distinct 403 in a row confirms it',
    );
    t.equal(await standing.of('acme', TENANT), 'refused');
    t.same(refusals, [{ tenant: TENANT, wasProven: true }]);
    const other = new TenantStanding(store, clock, { ...options, forbiddenInARow: 3 });
    t.equal(await other.of('acme', TENANT), 'refused', 'every instance knows');
  },
);

t.test(
  'a 403 to a key never accepted refuses it at once, and strangers are remembered at the opcoId for strangersRememberedS',
  async (t) => {
    const store = await createEmbeddedStore({});
    t.teardown(() => store.close());
    const clock = new TestClock({ frozen: true });
    const standing = new TenantStanding(store, clock, { ...options, strangersRememberedS: 600 });
    const refusals: boolean[] = [];
    standing.onRefusal(({ wasProven }) => refusals.push(wasProven));
    t.equal(await standing.strangersLately('acme'), false, 'calm at first');
    t.equal(await standing.forbidden('acme', TENANT, 'x', false), true);
    t.equal(await standing.of('acme', TENANT), 'refused');
    t.same(refusals, [false]);
    t.equal(await standing.strangersLately('acme'), true, 'an unproven key was refused here');
    t.equal(await standing.strangersLately('other'), false, 'not at other opcoIds');
    const two = new TenantStanding(store, clock, { ...options, strangersRememberedS: 600 });
    t.equal(await two.strangersLately('acme'), true, 'read by every instance');
    const proven = 'b'.repeat(64);
    await standing.accepted('other', proven);
    await standing.refused('other', proven, true);
    t.equal(await standing.strangersLately('other'), false, 'a proven key refused is no stranger');
    await clock.advance(600_000);
    t.equal(await two.strangersLately('acme'), false, 'forgotten after strangersRememberedS');
  },
);
