// Issue 38 point 7: what a large job costs the embedded store's datafiles (append-only until
// compaction). A job's sealed inputs are written once and deleted once, whatever its record's
// updates: a 15 MB job grows the datafiles by about its own size, not by a copy per update.
import t, { type Test } from 'tap';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KEY_A, dossierBody, eventually, startService, waitForJob, type Service } from '../src/index.js';

const MB = 1024 * 1024;
/** Bytes of the datafiles (and of a rewrite's `~`) in the store's directory. */
function datafileBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

function pdfOf(size: number): string {
  const file = randomBytes(size);
  file.write('%PDF-1.4\n', 0, 'latin1');
  return file.toString('base64');
}

/** Submits `body` as raw JSON, lets the job end, and measures the datafiles before and after. */
async function measure(t: Test, service: Service, dir: string, path: string, body: Record<string, unknown>) {
  const text = JSON.stringify(body);
  const before = datafileBytes(dir);
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    body: text,
  });
  const reply = (await response.json()) as { jobId: string; statusUrl: string };
  t.equal(response.status, 202, JSON.stringify(reply));
  const job = await waitForJob(service, reply.statusUrl, { timeoutMs: 120_000 });
  t.equal(job.status, 'completed', JSON.stringify(job.error));
  t.comment(`${job.retries} retries`);
  // The job is recorded as ended first, then what was kept apart is deleted.
  const purged = async () =>
    (await service.kernel.store.collection('job_files').count({ jobId: reply.jobId })) +
      (await service.kernel.store.collection('job_secrets').count({ _id: reply.jobId })) ===
    0;
  await eventually(purged, 'its files, and its key and body kept apart, purged at its end');
  t.pass('its files, and its key and body kept apart, purged at its end');
  const after = datafileBytes(dir);
  const growth = after - before;
  t.comment(
    `job of ${(text.length / MB).toFixed(1)} MB: datafiles ${(before / MB).toFixed(1)} MB before, ${(after / MB).toFixed(1)} MB after, growth ${(growth / MB).toFixed(1)} MB (${(growth / text.length).toFixed(2)}×)`,
  );
  return { jobId: reply.jobId, size: text.length, growth };
}

t.test(
  'a 15 MB dossier, its JSON and its files, retried once, grows the datafiles by about its size until compaction',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'opco-growth-'));
    const service = await startService({
      config: { store: { type: 'embedded', path: dir }, jobs: { backoffMs: [0, 0, 0] } },
    });
    t.teardown(async () => {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // 0.9 MB of JSON (a random annex in the CERFA, under limits.jsonBytes: it deflates to about
    // its base64's three quarters, so the datafile's base64 of it is about its size), and 16 MB of
    // files.
    const body = dossierBody({ _files: { cerfa: pdfOf(9 * MB), convention: pdfOf(3 * MB) } });
    body.cerfa.annexe = randomBytes(0.7 * MB).toString('base64');
    // Composite: the dossier, then the file; a retry of the first step releases the record and
    // claims it again. Each step, each release and each claim is a write of the record, whole.
    service.sandbox.faults.add({ route: 'POST /v1/dossiers', status: 503, times: 1 });
    const { jobId, size, growth } = await measure(t, service, dir, '/sandbox/dossiers', body);
    t.ok(size > 15 * MB, `a ${(size / MB).toFixed(1)} MB request`);
    t.ok(growth <= 1.2 * size, 'at most 1.2× its size');
    const record = (await service.kernel.store.collection('jobs').findOne({ _id: jobId })) as {
      inputs?: unknown;
    } | null;
    t.notOk(record?.inputs, 'no sealed inputs left in the record');
  },
);

t.test('a 15 MB dossier of files alone grows the datafiles by about its size', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'opco-growth-'));
  const service = await startService({ config: { store: { type: 'embedded', path: dir } } });
  t.teardown(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const body = dossierBody({ _files: { cerfa: pdfOf(8 * MB), convention: pdfOf(3.5 * MB) } });
  const { jobId, size, growth } = await measure(t, service, dir, '/sandbox/dossiers', body);
  t.ok(size > 15 * MB, `a ${(size / MB).toFixed(1)} MB request`);
  t.ok(growth <= 1.2 * size, 'at most 1.2× its size');
  const record = (await service.kernel.store.collection('jobs').findOne({ _id: jobId })) as { inputs?: unknown } | null;
  t.notOk(record?.inputs, 'no sealed inputs left in the record');
});
