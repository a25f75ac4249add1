// D18 on the embedded store with a directory, for a large job (issue 38 point 7): its body, kept
// apart from the job record, survives a kill -9 in the middle of its upstream call; the next
// process resumes the job, looks the dossier up rather than sending it again, and deletes the
// body once the job ended. No record line carries the body, before the crash or after.
import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { runCli, stopCli, writeConfig, dossierBody, waitForJob, send, TEST_MASTER_KEY, KEY_A } from '../src/index.js';

const MB = 1024 * 1024;
const datafileBytes = (dir: string) => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
/** The lines of a datafile that are about the job (documents, deletions), as they were appended. */
const linesOf = (dir: string, collection: string, id: string) =>
  readFileSync(join(dir, `${collection}.db`), 'utf8')
    .split('\n')
    .filter((line) => line.includes(id));

t.test(
  'a 15 MB job on the embedded store killed with SIGKILL mid-call resumes, sends once and purges its body',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'opco-kill-embedded-'));
    const sandbox = await startSandbox();
    const file = writeConfig({
      host: '127.0.0.1',
      port: 0,
      mode: 'development',
      store: { type: 'embedded', path: dir },
      jobs: { leaseMs: 2500, backoffMs: [100, 200, 400] },
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'kill',
          clientSecretEnv: 'KILL_SECRET',
        },
      },
    });
    const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, KILL_SECRET: 's' };
    const first = runCli(['serve', '--config', file], env);
    let second: ReturnType<typeof runCli> | undefined;
    t.teardown(async () => {
      await stopCli(first.child, 'SIGKILL');
      if (second) await stopCli(second.child);
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const firstUrl = await first.url;

    // The upstream is slow: it creates the dossier 1.5 s after the call arrives, after the process died.
    sandbox.faults.add({ route: 'POST /v1/dossiers', latencyMs: 1500, times: 1 });
    // 0.9 MB of JSON (under limits.jsonBytes, over the 64 KiB kept in the record) and a 12 MB
    // file: a composite job, the dossier then the file.
    const body = dossierBody({ _files: { cerfa: randomBytes(9 * MB).toString('base64') } });
    body.cerfa.annexe = randomBytes(0.7 * MB).toString('base64');
    const size = JSON.stringify(body).length;
    const before = datafileBytes(dir);
    const accepted = await send(firstUrl, 'POST', '/sandbox/dossiers', { body });
    t.equal(accepted.status, 202, accepted.text);
    const jobId = accepted.body.jobId as string;
    const arrived = () =>
      sandbox.received.some(
        (r) => r.method === 'POST' && (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
      );
    for (let i = 0; i < 400 && !arrived(); i++) await new Promise((r) => setTimeout(r, 25));
    t.ok(arrived(), 'the first process sent the dossier');
    first.child.kill('SIGKILL');
    t.equal(await stopCli(first.child, 'SIGKILL'), null, 'killed');

    const left = datafileBytes(dir) - before;
    t.comment(
      `job of ${(size / MB).toFixed(1)} MB: the datafiles grew ${(left / MB).toFixed(1)} MB (${(left / size).toFixed(2)}×) by the crash`,
    );
    t.ok(left <= 1.2 * size, 'at most 1.2× its size');
    t.equal(linesOf(dir, 'job_secrets', jobId).length, 1, 'its body written once, apart');
    t.equal(linesOf(dir, 'job_files', jobId).length, 1, 'its file written once');
    const records = linesOf(dir, 'jobs', jobId);
    t.ok(records.length >= 2, `its record written ${records.length} times (the submission, the claim, lease renewals)`);
    t.ok(
      records.every((line) => line.length < 64 * 1024),
      'none with the body',
    );

    second = runCli(['serve', '--config', file], env);
    const url = await second.url;
    const service = { request: (method: string, path: string, o?: any) => send(url, method, path, o) };
    const job = await waitForJob(service, accepted.body.statusUrl, { key: KEY_A, timeoutMs: 60_000 });
    t.equal(job.status, 'completed', JSON.stringify(job));
    const created = sandbox.dataset.dossiers.filter((d: any) => d.numeroExterne === body.cerfa.numeroExterne);
    t.equal(created.length, 1, 'one dossier upstream, not two');
    t.equal(job.result.numeroInterne, created[0].numeroInterne, 'the job found the dossier the dead process created');
    const posts = sandbox.received.filter(
      (r) => r.method === 'POST' && (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    );
    t.equal(posts.length, 1, 'not re-sent');
    t.equal((posts[0].json as any)?.cerfa?.annexe?.length, body.cerfa.annexe.length, 'the body sent whole');

    t.equal(await stopCli(second.child), 0, 'stopped');
    t.same(linesOf(dir, 'job_secrets', jobId), [], 'its body deleted at its end (the datafile rewritten at close)');
    t.same(linesOf(dir, 'job_files', jobId), [], 'its file too');
    const [record] = linesOf(dir, 'jobs', jobId);
    t.notOk(JSON.parse(record).inputs, 'and the record keeps no inputs');
  },
);
