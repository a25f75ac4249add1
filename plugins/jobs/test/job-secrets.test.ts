// SPEC 5.4, D17: sealed inputs round-trip, are bound to their job, and leftovers are swept.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, systemClock } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createSealer } from '@opco-proxy/core/application';
import { INLINE_BYTES, JobSecrets } from '../src/job-secrets.js';

const key = Buffer.alloc(32, 9);

t.test('inputs round-trip and are sealed at rest', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  const inputs = await secrets.seal('job-1', {
    apiKey: 'the-api-key-123',
    body: { nom: 'Dupont' },
    files: { cerfa: [Buffer.from('%PDF-secret')] },
  });
  t.same(inputs.files, ['cerfa'], 'the record names its files');
  const back = await secrets.open({ _id: 'job-1', inputs });
  t.equal(back?.apiKey, 'the-api-key-123');
  t.same(back?.body, { nom: 'Dupont' });
  t.same(Buffer.concat(back!.files.cerfa), Buffer.from('%PDF-secret'));
  const stored = await store.collection<any>('job_files').find({});
  const raw = JSON.stringify([inputs, stored]);
  for (const plain of ['the-api-key-123', 'Dupont', '%PDF-secret', Buffer.from('%PDF-secret').toString('base64')])
    t.notOk(raw.includes(plain), `no ${plain}`);
  const pages = stored[0].content.pages as Buffer[];
  t.ok(pages.length === 1 && Buffer.isBuffer(pages[0]), 'the file is kept as bytes');
  t.notOk(Buffer.concat(pages).includes(Buffer.from('%PDF')), 'its bytes are ciphertext');
});

t.test('files stored as base64 text by earlier versions still open', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const sealer = createSealer(key);
  const secrets = new JobSecrets(store, sealer, systemClock);
  const whole = sealer.seal(Buffer.from('%PDF-whole'), 'old-job:a');
  const paged = sealer.sealPages([Buffer.from('%PDF-'), Buffer.from('parts')], 'old-job:b');
  const parts = { iv: paged.iv, tag: paged.tag, parts: paged.pages.map((page) => page.toString('base64')) };
  const files = store.collection<any>('job_files');
  await files.insertOne({ _id: 'old-job:a', jobId: 'old-job', role: 'a', content: whole, createdAt: new Date() });
  await files.insertOne({ _id: 'old-job:b', jobId: 'old-job', role: 'b', content: parts, createdAt: new Date() });
  const inputs = {
    secrets: sealer.seal(JSON.stringify({ apiKey: 'key-old-1234', body: {} }), 'old-job'),
    files: ['a', 'b'],
  };
  const back = await secrets.open({ _id: 'old-job', inputs });
  t.equal(Buffer.concat(back!.files.a).toString(), '%PDF-whole', 'one sealed value (the first versions)');
  t.equal(Buffer.concat(back!.files.b).toString(), '%PDF-parts', 'base64 parts (before bytes)');
});

t.test('a sealed value moved to another job or read with another key fails', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  const inputs = await secrets.seal('job-a', { apiKey: 'key-a-123456', body: {}, files: {} });
  await t.rejects(secrets.open({ _id: 'job-b', inputs }), 'bound to its job id');
  await t.rejects(
    new JobSecrets(store, createSealer(Buffer.alloc(32, 1)), systemClock).open({ _id: 'job-a', inputs }),
    'another master key cannot read it',
  );
});

t.test('inputs kept apart by an earlier version are still read, then purged', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const sealer = createSealer(key);
  const secrets = new JobSecrets(store, sealer, systemClock);
  await store.collection<any>('job_secrets').insertOne({
    _id: 'old-job',
    apiKey: sealer.seal('key-old-1234', 'old-job'),
    body: sealer.seal('{"n":1}', 'old-job'),
    createdAt: new Date(),
  });
  const back = await secrets.open({ _id: 'old-job' });
  t.equal(back?.apiKey, 'key-old-1234');
  t.same(back?.body, { n: 1 });
  await secrets.purge({ _id: 'old-job' });
  t.equal(await secrets.open({ _id: 'old-job' }), null, 'gone');
});

t.test('inputs sealed apart in the job record by an earlier version are still read', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const sealer = createSealer(key);
  const secrets = new JobSecrets(store, sealer, systemClock);
  const split = {
    apiKey: sealer.seal('key-split-1234', 'split-job'),
    body: sealer.seal('{"n":2}', 'split-job'),
    files: [],
  };
  const back = await secrets.open({ _id: 'split-job', inputs: split });
  t.equal(back?.apiKey, 'key-split-1234');
  t.same(back?.body, { n: 2 });
  await t.rejects(secrets.open({ _id: 'other-job', inputs: split }), 'still bound to its job id');
  const joined = await secrets.seal('joined-job', { apiKey: 'key-joined-1234', body: { n: 3 }, files: {} });
  t.same(Object.keys(joined).sort(), ['files', 'secrets'], 'this version seals key and body as one value');
});

t.test('purge removes the files; the sweeper removes only old files', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const secrets = new JobSecrets(store, createSealer(key), clock);
  await secrets.seal('old', { apiKey: 'key-old-1234', body: {}, files: { a: [Buffer.from('1')] } });
  await clock.advance(25 * 3600_000);
  const recent = await secrets.seal('new', { apiKey: 'key-new-1234', body: {}, files: { b: [Buffer.from('2')] } });
  t.equal(await secrets.sweepFiles(24 * 3600_000), 1);
  t.equal(await store.collection('job_files').count({ jobId: 'new' }), 1, 'recent file kept');
  await secrets.purge({ _id: 'new', inputs: recent });
  t.equal(await store.collection('job_files').count({}), 0);
});

t.test('purge gives back the pages the embedded store kept, only once the files are removed', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  // As the request decodes a large file: resizable pages (resizable-buffer.ts).
  const page = Buffer.from(new (ArrayBuffer as any)(4096, { maxByteLength: 8192 }) as ArrayBuffer);
  page.fill(5);
  const inputs = await secrets.seal('job-r', { apiKey: 'key-r-123456', body: {}, files: { a: [page] } });
  const first = await secrets.open({ _id: 'job-r', inputs });
  t.equal(first!.stored.length, 1, 'the pages read are handed to the worker');
  const again = await secrets.open({ _id: 'job-r', inputs });
  t.same(Buffer.concat(again!.files.a), Buffer.alloc(4096, 5), 'opening (a retry) gives nothing back');
  await secrets.purge({ _id: 'job-r', inputs }, again!);
  t.equal(await store.collection('job_files').count({ jobId: 'job-r' }), 0);
  t.equal(first!.stored[0].length, 0, 'the stored page is given back');
  t.equal(page.length, 0, 'the very memory the request decoded into');
});

// Issue 38: a large body is kept apart from the job record, whose every update the embedded store
// appends whole to its datafile; it is written once and deleted once.
t.test('a body over INLINE_BYTES is kept apart, deflated and sealed, and purged with the job', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const secrets = new JobSecrets(store, createSealer(key), systemClock);
  const body = { lignes: Array.from({ length: 5000 }, (_, i) => ({ numeroDossier: `DOS-${i}`, nom: 'Dupont' })) };
  t.ok(JSON.stringify(body).length > INLINE_BYTES);
  const inputs = await secrets.seal('big-job', {
    apiKey: 'key-big-123456',
    body,
    files: { cerfa: [Buffer.from('%PDF-big')] },
  });
  t.same(inputs, { apart: true, files: ['cerfa'] }, 'the record carries only where they are');
  const apart = await store.collection<any>('job_secrets').findOne({ _id: 'big-job' });
  const pages = apart.deflated.pages as Buffer[];
  t.ok(
    pages.every((page) => Buffer.isBuffer(page)),
    'kept as bytes',
  );
  t.ok(pages.reduce((n, page) => n + page.length, 0) < JSON.stringify(body).length / 5, 'deflated');
  const raw = JSON.stringify(apart);
  for (const plain of ['key-big-123456', 'Dupont']) t.notOk(raw.includes(plain), `no ${plain}`);
  const back = await secrets.open({ _id: 'big-job', inputs });
  t.equal(back?.apiKey, 'key-big-123456');
  t.same(back?.body, body);
  t.same(Buffer.concat(back!.files.cerfa), Buffer.from('%PDF-big'));
  await store.collection<any>('job_secrets').insertOne({ ...apart, _id: 'other-job' });
  await t.rejects(secrets.open({ _id: 'other-job', inputs: { apart: true, files: [] } }), 'bound to its job id');
  await secrets.purge({ _id: 'big-job', inputs }, back!);
  t.equal(await store.collection('job_secrets').count({ _id: 'big-job' }), 0, 'deleted at the end');
  t.equal(await store.collection('job_files').count({ jobId: 'big-job' }), 0);
  t.equal(await secrets.open({ _id: 'big-job', inputs }), null, 'gone: the worker fails the job rather than guess');
  const small = await secrets.seal('small-job', { apiKey: 'key-small-1234', body: { n: 1 }, files: {} });
  t.ok('secrets' in small, 'a small body still rides in the record: one write');
});

t.test(
  "a large job's inputs survive a restart of a persistent store until it ends; a leftover is swept with the retention",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'opco-secrets-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const clock = new TestClock({ frozen: true });
    const body = { texte: 'x'.repeat(2 * INLINE_BYTES) };
    let store = await createEmbeddedStore({ path: dir });
    const inputs = await new JobSecrets(store, createSealer(key), clock).seal('kept-job', {
      apiKey: 'key-kept-1234',
      body,
      files: {},
    });
    await new JobSecrets(store, createSealer(key), clock).seal('left-job', {
      apiKey: 'key-left-1234',
      body,
      files: {},
    });
    await store.close();
    store = await createEmbeddedStore({ path: dir });
    t.teardown(() => store.close());
    const secrets = new JobSecrets(store, createSealer(key), clock);
    t.same((await secrets.open({ _id: 'kept-job', inputs }))?.body, body, 'read back after the restart');
    await clock.advance(31 * 24 * 3600_000);
    t.equal(await secrets.sweepSecrets(30 * 24 * 3600_000), 2, 'what no job can need any more goes');
  },
);
