// D15: keys per tenant, kept 24 hours, payload differences flagged, expired keys reusable.
import t from 'tap';
import { canonicalJson, createEmbeddedStore } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { IdempotencyKeys } from '../src/idempotency.js';

const FACTURE_A = { opcoId: 'a', type: 'post-facture' };

t.test('reserve, duplicate, payload difference, tenant scope', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const keys = new IdempotencyKeys(store, new TestClock());
  t.equal((await keys.reserve('tenant-1', 'k', 'job-1', { a: 1, b: 2 }, FACTURE_A)).fresh, true);
  t.same(
    await keys.reserve('tenant-1', 'k', 'job-2', { b: 2, a: 1 }, FACTURE_A),
    { fresh: false, jobId: 'job-1', payloadDiffers: false, opcoId: 'a' },
    'key order does not matter',
  );
  t.same(await keys.reserve('tenant-1', 'k', 'job-3', { a: 2 }, FACTURE_A), {
    fresh: false,
    jobId: 'job-1',
    payloadDiffers: true,
    opcoId: 'a',
  });
  t.equal((await keys.reserve('tenant-2', 'k', 'job-4', {}, FACTURE_A)).fresh, true, 'another tenant');
});

t.test('the same key sent to another opcoId or operation is the first job, flagged as differing', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const keys = new IdempotencyKeys(store, new TestClock());
  t.equal((await keys.reserve('t', 'k', 'job-1', { a: 1 }, FACTURE_A)).fresh, true);
  t.same(
    await keys.reserve('t', 'k', 'job-2', { a: 1 }, { opcoId: 'b', type: 'post-facture' }),
    { fresh: false, jobId: 'job-1', payloadDiffers: true, opcoId: 'a' },
    'another opcoId: the job of opco a',
  );
  t.same(
    await keys.reserve('t', 'k', 'job-3', { a: 1 }, { opcoId: 'a', type: 'post-convention' }),
    { fresh: false, jobId: 'job-1', payloadDiffers: true, opcoId: 'a' },
    'another operation',
  );
  t.same(
    await keys.reserve('t', 'k', 'job-4', { a: 1 }, FACTURE_A),
    { fresh: false, jobId: 'job-1', payloadDiffers: false, opcoId: 'a' },
    'the same request',
  );
});

t.test('an expired key is free again; a released key too', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock();
  const keys = new IdempotencyKeys(store, clock);
  await keys.reserve('t', 'k', 'job-1', {}, FACTURE_A);
  await clock.advance(24 * 60 * 60 * 1000);
  const again = await keys.reserve('t', 'k', 'job-2', {}, FACTURE_A);
  t.equal(again.fresh, true);
  if (again.fresh) await again.release();
  t.equal((await keys.reserve('t', 'k', 'job-3', {}, FACTURE_A)).fresh, true, 'released after a refused submission');
});

t.test('key length is checked', async (t) => {
  t.equal(IdempotencyKeys.check(undefined), undefined);
  t.equal(IdempotencyKeys.check('k'.repeat(255)), 'k'.repeat(255));
  t.throws(() => IdempotencyKeys.check('k'.repeat(256)), { code: 'VALIDATION_ERROR' });
  t.throws(() => IdempotencyKeys.check(''), { code: 'VALIDATION_ERROR' });
});

t.test('canonical JSON', async (t) => {
  t.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
});
