// Issue 38 point 1, "bounded requests, refused early", against the real service run as a process
// in front of the sandbox: `_files` takes the five roles only (so a dossier's job is at most six
// upstream calls), a body's values, fields per object, items per array and JSON bytes are bounded
// and refused as they stream in, unknown top-level fields are refused, and a hostile body of 1.5
// million keys, plain or brotli, is refused within a second while /health keeps answering within
// 100 ms. The cost of the largest bodies the bounds accept is measured and printed.
import { brotliCompressSync, constants } from 'node:zlib';
import t, { type Test } from 'tap';
import { Agent, request } from 'undici';
import { PDF, dossierBody, send, startClientScene, waitForJob, type ClientScene } from '../src/index.js';
import { eventLoopMaxMs, probeHealthKeptAlive } from '../src/request-probes.js';
import { probeHealthApart, type HealthProbes } from '../src/slow-clients.js';

const KEY = 'cfa-request-bounds-0001';
const ROLES = ['cerfa', 'facture', 'convention', 'certificat', 'document'];
const UNKNOWN_ROLE = `Unknown file role, expected one of ${ROLES.join(', ')}`;

const scene: ClientScene = await startClientScene({ acceptedKeys: [KEY] });
t.teardown(() => scene.close());
const sender = new Agent({ connections: 4 });
t.teardown(() => sender.close());

/** Sends `body` as it is (text, bytes, compressed); the answer and how long it took to come. */
async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const started = performance.now();
  const answer = await request(scene.url + path, {
    method: 'POST',
    dispatcher: sender,
    body,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', ...headers },
  });
  const ms = performance.now() - started;
  const text = await answer.body.text();
  return { status: answer.statusCode, body: text ? JSON.parse(text) : undefined, ms };
}

const service = {
  request: (method: string, path: string, options: { body?: unknown } = {}) =>
    send(scene.url, method, path, { ...options, key: KEY }),
};
const upstreamCalls = () => scene.upstreamCalls(KEY);

// A CFA's key the upstream has answered before (P13: a proven key).
t.equal((await scene.send('GET', '/sandbox/dossiers/etats', KEY)).status, 200, 'the key is one the upstream knows');

t.test('200 `_files` entries: 400 naming the first name that is no role; nothing sent upstream', async (t) => {
  const before = upstreamCalls();
  const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, 'QQ==']));
  const reply = await post('/sandbox/dossiers', JSON.stringify({ ...dossierBody(), _files: files }));
  t.equal(reply.status, 400);
  t.equal(reply.body.code, 'VALIDATION_ERROR');
  t.same(reply.body.errors, [`_files.f0: ${UNKNOWN_ROLE}`]);
  const mixed = await post(
    '/sandbox/dossiers',
    JSON.stringify({ ...dossierBody(), _files: { cerfa: 'QQ==', facture: 'QQ==', annexe: 'QQ==' } }),
  );
  t.same(mixed.body.errors, [`_files.annexe: ${UNKNOWN_ROLE}`], 'after two roles, the third name');
  t.equal(upstreamCalls(), before, 'no upstream call');
});

t.test('the five roles: one job of at most six upstream calls, one per file after the dossier (D16)', async (t) => {
  const before = upstreamCalls();
  const files = Object.fromEntries(ROLES.map((role) => [role, PDF.toString('base64')]));
  const reply = await post('/sandbox/dossiers', JSON.stringify({ ...dossierBody(), _files: files }));
  t.equal(reply.status, 202, JSON.stringify(reply.body));
  const job = await waitForJob(service, reply.body.statusUrl, { key: KEY, timeoutMs: 60_000 });
  t.equal(job.status, 'completed', JSON.stringify(job.error));
  const calls = upstreamCalls() - before;
  t.ok(calls <= 6, `${calls} upstream calls`);
  t.equal(calls, 6, 'the dossier, then one document per role');
});

t.test(
  'unknown top-level fields are refused, never forwarded; structure past a bound is refused naming where',
  async (t) => {
    const before = upstreamCalls();
    const unknown = await post(
      '/sandbox/dossiers',
      JSON.stringify({ ...dossierBody(), colour: 'blue', remarque: null }),
    );
    t.equal(unknown.status, 400);
    t.same(unknown.body.errors, ['colour: Unrecognized field', 'remarque: Unrecognized field']);
    const numero = scene.sandbox.dataset.dossiers[0].numeroInterne;
    const facture = {
      montantTotal: 1,
      numero: 'F-BOUNDS',
      dateEmission: '2025-01-01',
      ibanEmetteur: 'FR7630006000011234567890189',
      siretEmetteur: '98765432109876',
    };
    const items = await post(
      '/sandbox/factures',
      JSON.stringify({ ...facture, lignes: Array.from({ length: 10_001 }, () => numero) }),
    );
    t.equal(items.status, 400);
    t.same(items.body.errors, ['lignes: Must contain at most 10000 items']);
    const fields = await post(
      '/sandbox/dossiers',
      JSON.stringify(
        dossierBody({
          cerfa: {
            ...dossierBody().cerfa,
            formation: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, i])),
          },
        }),
      ),
    );
    t.same(fields.body.errors, ['cerfa.formation: Must contain at most 1000 fields']);
    const values = await post(
      '/sandbox/dossiers',
      JSON.stringify(
        dossierBody({
          cerfa: {
            ...dossierBody().cerfa,
            notes: Array.from({ length: 3 }, () => Array.from({ length: 7_000 }, () => 0)),
          },
        }),
      ),
    );
    t.same(values.body.errors, ['body: Must contain at most 20000 values']);
    const json = await post(
      '/sandbox/dossiers',
      JSON.stringify(dossierBody({ cerfa: { ...dossierBody().cerfa, note: 'x'.repeat(1024 * 1024) } })),
    );
    t.equal(json.status, 413);
    t.equal(json.body.code, 'PAYLOAD_TOO_LARGE');
    t.equal(json.body.description, 'request body is over the 1048576-byte limit for its JSON outside _files');
    t.equal(upstreamCalls(), before, 'no upstream call');
  },
);

/** `{"cerfa":{...},"k0000000":0,...}`: the hostile body of the issue, 1.5 million top-level keys. */
function millionKeys(): Buffer {
  const head = JSON.stringify(dossierBody()).slice(0, -1);
  const parts = [head];
  for (let i = 0; i < 1_500_000; i++) parts.push(`,"k${String(i).padStart(7, '0')}":0`);
  parts.push('}');
  return Buffer.from(parts.join(''));
}

t.test('1.5 million keys, plain and brotli: refused within a second, /health within 100 ms throughout', async (t) => {
  const plain = millionKeys();
  const brotli = brotliCompressSync(plain, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
  t.comment(`the body: ${(plain.length / 1e6).toFixed(1)} MB, ${(brotli.length / 1e3).toFixed(0)} KB as brotli`);
  const before = upstreamCalls();
  // Probed from a process of its own: this one builds and sends the bodies and runs the sandbox.
  // The same probe with nothing to do first: how slow this machine's other work makes /health anyway.
  const idle = probeHealthApart(scene.url, 20);
  await idle.ready;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const baseline = slowest(await idle.stop());
  await eventLoopMaxMs(scene.url);
  const health = probeHealthApart(scene.url, 20);
  await health.ready;
  const replies = [];
  for (const [label, body, headers] of [
    ['plain', plain, {}],
    ['brotli', brotli, { 'content-encoding': 'br' }],
  ] as const) {
    const reply = await post('/sandbox/dossiers', body, headers);
    t.equal(reply.status, 400, label);
    t.same(reply.body.errors, ['body: Must contain at most 1000 fields'], label);
    t.ok(reply.ms < 1000, `${label}: refused in ${reply.ms.toFixed(0)} ms`);
    replies.push(`${label} ${reply.ms.toFixed(0)} ms`);
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const probes = await health.stop();
  const probed = { ...slowest(probes), probes: probes.times.length, failures: probes.failures.length };
  const stall = await eventLoopMaxMs(scene.url);
  t.comment(
    `refused: ${replies.join(', ')}; /health: ${probed.probes} probes, slowest ${probed.maxMs.toFixed(1)} ms (${baseline.maxMs.toFixed(1)} ms with nothing to do); ` +
      `the service's event loop held at most ${stall.toFixed(1)} ms`,
  );
  t.equal(probed.failures, 0);
  // Before: /health stalled 7 s. 100 ms over what a loaded machine costs it anyway.
  t.ok(probed.maxMs < 100 + baseline.maxMs, `/health answered within ${probed.maxMs.toFixed(1)} ms`);
  t.equal(upstreamCalls(), before, 'nothing forwarded');
});

function slowest(probes: HealthProbes): { maxMs: number } {
  return { maxMs: Math.max(0, ...probes.times) };
}

/** Sends `body`, waits for its job, and says what it cost: the slowest /health, the longest event-loop hold. */
async function measured(t: Test, label: string, body: Buffer) {
  await eventLoopMaxMs(scene.url);
  const health = probeHealthKeptAlive(scene.url, 10);
  const reply = await post('/sandbox/dossiers', body);
  t.equal(reply.status, 202, `${label}: ${JSON.stringify(reply.body)}`);
  const accepted = await eventLoopMaxMs(scene.url);
  const job = await waitForJob(service, reply.body.statusUrl, { key: KEY, timeoutMs: 120_000 });
  t.equal(job.status, 'completed', `${label}: ${JSON.stringify(job.error)}`);
  const probed = await health.stop();
  const ran = await eventLoopMaxMs(scene.url);
  t.comment(
    `${label} (${(body.length / 1e6).toFixed(1)} MB): accepted in ${reply.ms.toFixed(0)} ms; event loop held at most ${accepted.toFixed(1)} ms while it was read and stored, ` +
      `${ran.toFixed(1)} ms while its job ran; /health slowest ${probed.maxMs.toFixed(1)} ms (${probed.probes} probes; the sandbox shares the test's process)`,
  );
  return { accepted, ran };
}

t.test('the largest bodies the bounds accept: their event-loop stall, measured', async (t) => {
  // 25 MiB with files: a 10 MiB cerfa (limits.fileBytes) and a facture filling the rest.
  const limit = 25 * 1024 * 1024;
  const cerfa = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
  const skeleton = JSON.stringify({ ...dossierBody(), _files: { cerfa, facture: '' } });
  const rest = Math.floor((limit - skeleton.length) / 4) * 3;
  const withFiles = Buffer.from(
    JSON.stringify({ ...dossierBody(), _files: { cerfa, facture: Buffer.alloc(rest, 9).toString('base64') } }),
  );
  t.ok(withFiles.length <= limit && withFiles.length > limit - 8, `${withFiles.length} bytes`);
  await measured(t, 'files', withFiles);
  // The most JSON: nearly 1 MiB (limits.jsonBytes) in nearly 20,000 values (limits.bodyValues).
  const notes = Array.from({ length: 2 }, () => Array.from({ length: 9_950 }, () => 'n'.repeat(49)));
  const json = Buffer.from(JSON.stringify(dossierBody({ cerfa: { ...dossierBody().cerfa, notes } })));
  t.ok(json.length <= 1024 * 1024 && json.length > 1_000_000, `${json.length} bytes`);
  await measured(t, 'JSON', json);
});
