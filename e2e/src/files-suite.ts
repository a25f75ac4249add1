/**
 * `_files` of the asynchronous POSTs (SPEC 4.0.4, D7, D15) as the service decodes them while the
 * body arrives (issue 11, memory): files up to the limit reach the upstream intact, a bad
 * character deep inside a large file or a file over the limit is refused in the spec's shape
 * with nothing stored, compressed bodies are read, and Idempotency-Key compares bodies with files
 * as before, keys reserved by earlier versions included. Run on the embedded backends and on
 * MongoDB + RabbitMQ by the two jobs test files.
 */
import type { Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { canonicalJson, sha256Hex, tenantHash } from '@opco-proxy/core';
import { startService, KEY_A, type Service, type ServiceOptions } from './harness.js';
import { eventually } from './eventually.js';
import { factureBody, waitForJob } from './jobs-client.js';

const FILE_LIMIT = 10 * 1024 * 1024;
const UPSTREAM_FACTURES = '/v1/factures';

/** A PDF-looking file of `size` bytes, different each time. */
function pdfOf(size: number): Buffer {
  const file = randomBytes(size);
  file.write('%PDF-1.4\n', 0, 'latin1');
  return file;
}

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export function filesSuite(t: Test, backend: () => ServiceOptions): void {
  let service: Service;
  t.before(async () => {
    service = await startService(backend());
  });
  t.teardown(() => service.close());
  const numero = () => service.sandbox.dataset.dossiers[0].numeroInterne;
  const sentFiles = () =>
    service.sandbox.received
      .filter((r) => r.method === 'POST' && r.path === UPSTREAM_FACTURES)
      .flatMap((r) => r.parts!.filter((p) => p.name === 'fichier'));
  /** A body as bytes, with the headers a client would send; the answer parsed. */
  const post = async (body: string | Buffer, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.url}/sandbox/factures`, {
      method: 'POST',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const stored = async () => {
    const [jobs, files] = await Promise.all([
      service.kernel.store.collection('jobs').count({}),
      service.kernel.store.collection('job_files').count({}),
    ]);
    return { jobs, files };
  };

  t.test('a file of exactly the limit reaches the upstream intact, and its sealed pages are gone after', async (t) => {
    const file = pdfOf(FILE_LIMIT);
    const reply = await post(
      JSON.stringify({ ...factureBody(numero()), _files: { facture: file.toString('base64') } }),
    );
    t.equal(reply.status, 202, JSON.stringify(reply.body));
    const record = (await service.kernel.store.collection('job_files').findOne({ jobId: reply.body.jobId })) as {
      content: { pages?: Buffer[] };
    } | null;
    if (record) {
      const pages = record.content.pages ?? [];
      t.ok(pages.length > 1 && pages.every((page) => Buffer.isBuffer(page)), 'kept sealed as pages of bytes');
      t.equal(
        pages.reduce((n, page) => n + page.length, 0),
        FILE_LIMIT,
        'as long as the file: ciphertext, not its base64',
      );
    }
    const job = await waitForJob(service, reply.body.statusUrl, { timeoutMs: 60_000 });
    t.equal(job.status, 'completed', JSON.stringify(job.error));
    const sent = sentFiles().at(-1)!;
    t.equal(sent.content.length, FILE_LIMIT);
    t.equal(digest(sent.content), digest(file), 'the bytes the client sent');
    t.equal(sent.contentType, 'application/pdf');
    // The job is recorded as ended first, then its files are purged.
    await eventually(
      async () => (await service.kernel.store.collection('job_files').count({ jobId: reply.body.jobId })) === 0,
      'the sealed file purged once the job ended',
    );
  });

  t.test(
    'a file job retried after a 503 sends the same bytes again; its pages are given back only once it ends',
    async (t) => {
      const file = pdfOf(2 * 1024 * 1024 + 5);
      service.sandbox.faults.add({ route: `POST ${UPSTREAM_FACTURES}`, status: 503, times: 1 });
      t.teardown(() => service.sandbox.faults.clear());
      const before = sentFiles().length;
      const reply = await post(
        JSON.stringify({ ...factureBody(numero()), _files: { facture: file.toString('base64') } }),
      );
      t.equal(reply.status, 202, JSON.stringify(reply.body));
      const record = (await service.kernel.store.collection('job_files').findOne({ jobId: reply.body.jobId })) as {
        content: { pages: Buffer[] };
      } | null;
      // The embedded store keeps the pages the request decoded (resizable); MongoDB's are copies.
      const shared = (record?.content.pages ?? []).filter(
        (page) => (page.buffer as { resizable?: boolean }).resizable === true,
      );
      if (backend().config === undefined) t.ok(shared.length > 1, 'the embedded store shares the pages it keeps');
      const job = await waitForJob(service, reply.body.statusUrl, { timeoutMs: 60_000 });
      t.equal(job.status, 'completed', JSON.stringify(job.error));
      t.equal(job.retries, 1, 'the first attempt failed');
      const sent = sentFiles().slice(before);
      t.equal(sent.length, 2, 'sent twice');
      for (const attempt of sent)
        t.equal(digest(attempt.content), digest(file), 'each attempt sent the bytes the client sent');
      await eventually(
        async () => (await service.kernel.store.collection('job_files').count({ jobId: reply.body.jobId })) === 0,
        'the sealed file purged once the job ended',
      );
      t.ok(
        shared.every((page) => page.length === 0),
        `the ${shared.length} pages the store shared are given back`,
      );
    },
  );

  t.test('a file one byte over the limit is a 413 naming it; nothing is stored', async (t) => {
    const before = await stored();
    const reply = await post(
      JSON.stringify({
        ...factureBody(numero()),
        _files: { cerfa: 'QUJD', facture: pdfOf(FILE_LIMIT + 1).toString('base64') },
      }),
    );
    t.equal(reply.status, 413);
    t.equal(reply.body.code, 'PAYLOAD_TOO_LARGE');
    t.equal(
      reply.body.description,
      `_files.facture: file of ${FILE_LIMIT + 1} bytes is over the ${FILE_LIMIT}-byte limit`,
    );
    t.same(await stored(), before);
  });

  t.test(
    'a bad character in the middle of a large file is a 400 naming the role, beside the other problems',
    async (t) => {
      const before = await stored();
      const text = pdfOf(3 * 1024 * 1024).toString('base64');
      const broken = `${text.slice(0, 2_000_000)}*${text.slice(2_000_001)}`;
      const body = { ...factureBody(numero()), _files: { facture: broken, document: 'QUJD' } } as Record<
        string,
        unknown
      >;
      delete body.numero;
      const reply = await post(JSON.stringify(body));
      t.equal(reply.status, 400);
      t.equal(reply.body.code, 'VALIDATION_ERROR');
      t.ok(reply.body.errors.includes('_files.facture: Invalid base64'), JSON.stringify(reply.body.errors));
      t.ok(reply.body.errors.includes('numero: Required'), 'the schema still judges the rest of the body');
      t.notOk(
        reply.body.errors.some((e: string) => e.startsWith('_files.document')),
        'the good file is fine',
      );
      const lineBreaks = await post(
        JSON.stringify({ ...factureBody(numero()), _files: { facture: text.replace(/(.{76})/g, '$1\n') } }),
      );
      t.same(
        lineBreaks.body.errors,
        ['_files.facture: Invalid base64'],
        'a MIME-style line break is refused, as before',
      );
      const empty = await post(JSON.stringify({ ...factureBody(numero()), _files: { facture: '' } }));
      t.equal(empty.status, 400, 'an empty file is refused by the schema');
      t.same(await stored(), before);
    },
  );

  t.test('a body whose file breaks JSON string rules is invalid JSON', async (t) => {
    const reply = await post(`{"numero":"X","_files":{"facture":"QUJD\u0001RA=="}}`);
    t.equal(reply.status, 400);
    t.same(reply.body.errors, ['body: invalid JSON']);
  });

  t.test('a gzip body with a file is read, and a file written with JSON escapes too', async (t) => {
    const file = pdfOf(2 * 1024 * 1024 + 1);
    const gzipped = await post(
      gzipSync(JSON.stringify({ ...factureBody(numero()), _files: { facture: file.toString('base64') } })),
      { 'content-encoding': 'gzip' },
    );
    t.equal(gzipped.status, 202, JSON.stringify(gzipped.body));
    t.equal((await waitForJob(service, gzipped.body.statusUrl, { timeoutMs: 30_000 })).status, 'completed');
    t.equal(digest(sentFiles().at(-1)!.content), digest(file));
    // PHP's json_encode writes `/` as `\/`.
    const small = pdfOf(3000);
    const escaped = JSON.stringify({ ...factureBody(numero()), _files: { facture: small.toString('base64') } }).replace(
      /\//g,
      '\\/',
    );
    const reply = await post(escaped);
    t.equal(reply.status, 202, JSON.stringify(reply.body));
    await waitForJob(service, reply.body.statusUrl);
    t.equal(digest(sentFiles().at(-1)!.content), digest(small));
  });

  t.test(
    'Idempotency-Key with files: the same file is a duplicate, another is flagged, as with keys reserved before',
    async (t) => {
      const file = pdfOf(1024 * 1024 + 2);
      const body = { ...factureBody(numero()), _files: { facture: file.toString('base64') } };
      const key = `files-${Date.now()}`;
      const first = await post(JSON.stringify(body), { 'idempotency-key': key });
      t.equal(first.status, 202);
      const again = await post(JSON.stringify(body), { 'idempotency-key': key });
      t.same(again.body, { jobId: first.body.jobId, status: 'duplicate', statusUrl: first.body.statusUrl });
      const otherFile = await post(
        JSON.stringify({ ...body, _files: { facture: pdfOf(1024 * 1024 + 2).toString('base64') } }),
        { 'idempotency-key': key },
      );
      t.equal(otherFile.status, 200);
      t.equal(otherFile.body.jobId, first.body.jobId);
      t.equal(otherFile.body.warning, 'payload differs from the original request');
      await waitForJob(service, first.body.statusUrl);

      // A key reserved by a version that kept files as text: its hash is of the body as sent.
      const oldKey = `files-old-${Date.now()}`;
      const tenant = tenantHash(KEY_A);
      await service.kernel.store.collection<any>('idempotency_keys').insertOne({
        _id: sha256Hex(`${tenant}\n${oldKey}`),
        tenant,
        jobId: first.body.jobId,
        payloadHash: sha256Hex(canonicalJson(body)),
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      const replayed = await post(JSON.stringify(body), { 'idempotency-key': oldKey });
      t.same(
        replayed.body,
        { jobId: first.body.jobId, status: 'duplicate', statusUrl: first.body.statusUrl },
        'same body: no warning',
      );
      const changed = await post(JSON.stringify({ ...body, _files: { facture: pdfOf(10).toString('base64') } }), {
        'idempotency-key': oldKey,
      });
      t.equal(changed.body.warning, 'payload differs from the original request');
    },
  );

  t.test('a queue that refuses a job with a file: 503, and neither the file nor the key is kept', async (t) => {
    const broken = await startService({ ...backend(), upstream: service.sandbox });
    t.teardown(() => broken.close());
    await broken.kernel.queue.close();
    const response = await fetch(`${broken.url}/sandbox/factures`, {
      method: 'POST',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', 'idempotency-key': 'refused-file' },
      body: JSON.stringify({
        ...factureBody(numero()),
        _files: { facture: pdfOf(3 * 1024 * 1024).toString('base64') },
      }),
    });
    t.equal(response.status, 503);
    for (const name of ['jobs', 'job_files', 'idempotency_keys'])
      t.equal(await broken.kernel.store.collection(name).count({}), 0, `${name} left empty`);
  });

  t.test('an upload cut off in the middle of a file stores nothing, and the service answers on', async (t) => {
    const before = await stored();
    const text = JSON.stringify({
      ...factureBody(numero()),
      _files: { facture: pdfOf(4 * 1024 * 1024).toString('base64') },
    });
    const { port } = new URL(service.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /sandbox/factures HTTP/1.1\r\nHost: test\r\nx-api-key: ${KEY_A}\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\n\r\n`,
        );
        socket.write(text.slice(0, 2_500_000), () => socket.destroy());
      });
      socket.on('close', () => resolve()).on('error', reject);
    });
    t.equal((await fetch(`${service.url}/health`)).status, 200);
    t.same(await stored(), before);
  });
}
