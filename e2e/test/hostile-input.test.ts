// Issue "hardening" 1-3, 12: bodies nested thousands of levels deep, odd encodings and content
// types, wrong methods, and upstream answers nested deep enough to freeze a recursive walk:
// every one answered in the error shape, the process answering /health throughout.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import t from 'tap';
import {
  startService,
  dossierBody,
  waitForJob,
  KEY_A,
  realBackends,
  realBackendsSkip,
  type Service,
  type ServiceOptions,
} from '../src/index.js';

/** `[[[...1...]]]`, `depth` arrays deep: a walk that visits each array's element twice per level never ends. */
function nestedArrays(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** `[[[...]]]` as text: building it as a value and stringifying would itself overflow. */
function deepJsonText(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

async function post(service: Service, path: string, body: string | Buffer, headers: Record<string, string>) {
  const response = await fetch(service.url + path, {
    method: 'POST',
    headers: { 'x-api-key': KEY_A, ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const service = await startService({ opcos: { common: { adapter: 'common-api' } } });
t.teardown(() => service.close());

t.test('a write body nested 5,000 levels deep is a 400 naming the limit, not a 503 to retry for ever', async (t) => {
  for (const path of ['/sandbox/dossiers', '/webhooks', '/sync/dossiers']) {
    const reply = await post(service, path, `{"cerfa":${deepJsonText(5000)}}`, { 'content-type': 'application/json' });
    t.equal(reply.status, 400, path);
    t.equal(reply.body.code, 'VALIDATION_ERROR');
    t.same(reply.body.errors, ['body: nested deeper than 32 levels']);
  }
  t.equal((await service.get('/health', { key: null })).status, 200);
});

t.test(
  'Content-Encoding: real gzip and br bodies are read; a plain body that says gzip is a 400; an unknown encoding is a 415',
  async (t) => {
    const json = JSON.stringify(dossierBody());
    const gzipped = await post(service, '/sandbox/dossiers', gzipSync(json), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    t.equal(gzipped.status, 202, 'gzip');
    const brotli = await post(service, '/sandbox/dossiers', brotliCompressSync(json), {
      'content-type': 'application/json',
      'content-encoding': 'br',
    });
    t.equal(brotli.status, 202, 'br');
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const liar = await post(service, '/sandbox/dossiers', json, {
        'content-type': 'application/json',
        'content-encoding': encoding,
      });
      t.equal(liar.status, 400, `plain body said ${encoding}`);
      t.same(liar.body.errors, [`body: not valid ${encoding} data, as its Content-Encoding says`]);
    }
    const unknown = await post(service, '/sandbox/dossiers', json, {
      'content-type': 'application/json',
      'content-encoding': 'compress',
    });
    t.equal(unknown.status, 415);
    t.equal(unknown.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    t.match(unknown.body.description, /Content-Encoding compress/);
  },
);

t.test('a body that is not JSON is a 415 naming Content-Type, not a parse as dossier fields', async (t) => {
  const form = await post(service, '/sandbox/dossiers', 'cerfa=1&foo=bar', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.equal(form.status, 415);
  t.equal(form.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  t.same(form.body.errors, ['Content-Type: must be application/json (got application/x-www-form-urlencoded)']);
  const bare = await fetch(`${service.url}/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': KEY_A, 'content-type': '' },
    body: '{}',
  });
  t.equal(bare.status, 415, 'no content type at all');
  const broken = await post(service, '/webhooks', '{"callbackUrl": ', { 'content-type': 'application/json' });
  t.equal(broken.status, 400);
  t.same(broken.body.errors, ['body: invalid JSON']);
});

t.test('a wrong method on an existing path is a 405 with Allow', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['PUT', '/webhooks', /GET.*POST|POST.*GET/],
    ['DELETE', '/sandbox/dossiers/etats', /GET/],
    ['POST', '/health', /GET/],
  ];
  for (const [method, path, allow] of cases) {
    const reply = await service.request(method, path);
    t.equal(reply.status, 405, `${method} ${path}`);
    t.equal(reply.body.code, 'METHOD_NOT_ALLOWED');
    t.match(reply.headers.get('allow'), allow);
  }
});

t.test(
  'read answers nested deeper than the limit are 502 UPSTREAM_INVALID_RESPONSE; the process keeps answering',
  async (t) => {
    service.sandbox.faults.add({
      route: 'GET /v2/dossiers/etats',
      status: 200,
      body: { status: 'success', EtatDossierResult: nestedArrays(100) },
      times: 1,
    });
    const reply = await service.get('/sandbox/dossiers/etats?numeroPage=7');
    t.equal(reply.status, 502);
    t.equal(reply.body.code, 'UPSTREAM_INVALID_RESPONSE');
    t.match(reply.body.description, /nested deeper than 64 levels/);
    t.equal((await service.get('/health', { key: null })).status, 200);
  },
);

function deepAnswerSuite(label: string, options: () => ServiceOptions) {
  t.test(`upstream answers to a job, nested deep (${label})`, async (t) => {
    const jobs = await startService({
      ...options(),
      config: { ...options().config, jobs: { backoffMs: [50, 50, 50] } },
    });
    t.teardown(() => jobs.close());
    const posted = () => jobs.sandbox.received.filter((r) => r.method === 'POST' && r.path === '/v1/dossiers').length;

    jobs.sandbox.faults.add({
      route: 'POST /v1/dossiers',
      status: 201,
      body: { status: 'success', numeroInterne: 'DOS-DEEP-1', echo: nestedArrays(40) },
      times: 1,
    });
    const health = setInterval(() => void jobs.get('/health', { key: null }), 20);
    const accepted = await jobs.request('POST', '/sandbox/dossiers', { body: dossierBody() });
    const done = await waitForJob(jobs, accepted.body.statusUrl);
    clearInterval(health);
    t.equal(done.status, 'completed', 'an answer 40 levels deep is kept (as text) and the job completes');
    t.equal(done.result.numeroInterne, 'DOS-DEEP-1');
    t.equal((await jobs.get('/health', { key: null })).status, 200, '/health answers after it');

    // 150 levels: unusable; the upstream may have acted, so the job fails and is never re-sent.
    const before = posted();
    jobs.sandbox.faults.add({
      route: 'POST /v1/dossiers',
      status: 201,
      body: { status: 'success', echo: nestedArrays(150) },
      times: 1,
    });
    const second = await jobs.request('POST', '/sandbox/dossiers', { body: dossierBody() });
    const failed = await waitForJob(jobs, second.body.statusUrl);
    t.equal(failed.status, 'failed');
    t.equal(failed.error.code, 'UPSTREAM_INVALID_RESPONSE', 'not INTERNAL_ERROR: the store never saw the answer');
    t.type(failed.error.upstream, 'string', 'the raw answer is kept, cut short');
    t.ok(failed.error.upstream.length < 2200);
    t.equal(posted() - before, 1, 'sent exactly once');

    // An error body 40 deep: the job fails after its retries with the body kept as text.
    jobs.sandbox.faults.add({
      route: 'POST /v1/dossiers',
      status: 422,
      body: { message: 'refusé', detail: nestedArrays(40) },
      times: 1,
    });
    const third = await jobs.request('POST', '/sandbox/dossiers', { body: dossierBody() });
    const refused = await waitForJob(jobs, third.body.statusUrl);
    t.equal(refused.error.code, 'UPSTREAM_ERROR');
    t.type(refused.error.upstream, 'string', 'a deep error body is kept as truncated text');
    t.equal((await jobs.get('/health', { key: null })).status, 200);
  });
}

deepAnswerSuite('embedded store', () => ({}));
if (!realBackendsSkip()) deepAnswerSuite('MongoDB and RabbitMQ', () => ({ config: realBackends('deep') }));
