// SPEC 5.4, D17: sealed inputs round-trip, are bound to their job, and leftovers are swept.
import t from 'tap';
import { createEmbeddedStore, createSealer, systemClock } from '@opco-proxy/core';
import { JobSecrets } from '../src/job-secrets.js';

const key = Buffer.alloc(32, 9);

t.test('inputs round-trip and are sealed at rest', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  await secrets.put('job-1', { apiKey: 'the-api-key-123', body: { nom: 'Dupont' }, files: { cerfa: Buffer.from('%PDF-secret') } });
  const back = await secrets.get('job-1');
  t.equal(back?.apiKey, 'the-api-key-123');
  t.same(back?.body, { nom: 'Dupont' });
  t.same(back?.files.cerfa, Buffer.from('%PDF-secret'));
  const raw = JSON.stringify([await store.collection('job_secrets').find({}), await store.collection('job_files').find({})]);
  for (const plain of ['the-api-key-123', 'Dupont', '%PDF-secret', Buffer.from('%PDF-secret').toString('base64')]) t.notOk(raw.includes(plain), `no ${plain}`);
});

t.test('a sealed value moved to another job or read with another key fails', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  await secrets.put('job-a', { apiKey: 'key-a-123456', body: {}, files: {} });
  const record = await store.collection<any>('job_secrets').findOne({ _id: 'job-a' });
  await store.collection<any>('job_secrets').insertOne({ ...record, _id: 'job-b' });
  await t.rejects(secrets.get('job-b'), 'bound to its job id');
  await t.rejects(new JobSecrets(store, createSealer(Buffer.alloc(32, 1)), systemClock).get('job-a'), 'another master key cannot read it');
});

t.test('purge removes everything; the sweeper removes only old files', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  await secrets.put('old', { apiKey: 'key-old-1234', body: {}, files: { a: Buffer.from('1') } });
  await secrets.put('new', { apiKey: 'key-new-1234', body: {}, files: { b: Buffer.from('2') } });
  await store.collection('job_files').updateMany({ jobId: 'old' }, { $set: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
  t.equal(await secrets.sweepFiles(24 * 3600_000), 1);
  t.equal(await store.collection('job_files').count({ jobId: 'new' }), 1, 'recent file kept');
  await secrets.purge('new');
  t.equal(await secrets.get('new'), null);
  t.equal(await store.collection('job_files').count({}), 0);
});
