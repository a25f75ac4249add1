// The operation router through a kernel's HTTP answers (embedded store and queue, a free port):
// routes from the manifest, literal paths before /{opcoId}/, the three kinds of authentication,
// the tenant's rate, body limits and validation, 405/415/501, and the edge's checks of keys the
// upstream refused and of addresses sending unproven keys.
import t, { type Test } from 'tap';
import { request } from 'undici';
import {
  createEmbeddedQueue,
  createEmbeddedStore,
  createKernel,
  resolveConfig,
  tenantHash,
  TestClock,
  type Kernel,
  type Plugin,
} from '../src/application.js';
import { INLINE_ADAPTER } from './fixtures/inline-adapter.js';
import { answerJson, startRecordingServer, type RecordingServer } from '../src/testing/recording-server.js';

const KEY = 'tenant-key-0001';
const ADMIN_KEY = 'a'.repeat(40);
const PAGE = { status: 'ok', EtatDossierResult: [] };

interface Seen {
  operation: string;
  params: Record<string, string>;
  query: unknown;
  body: unknown;
  tenant?: string;
}

/** Mounts a few operations of the manifest with handlers that say what they were given. */
function echoPlugin(seen: Seen[]): Plugin {
  const echo =
    (operation: string, status: number) =>
    (input: { params: Record<string, string>; query: unknown; body?: unknown; tenant?: { hash: string } }) => {
      seen.push({
        operation,
        params: { ...input.params },
        query: input.query,
        body: input.body,
        tenant: input.tenant?.hash,
      });
      return { status, body: { operation } } as never;
    };
  return {
    name: 'echo',
    register(api) {
      api.route('startSync', echo('startSync', 202));
      api.route('getSync', echo('getSync', 200));
      api.route('listWebhookDeliveries', echo('listWebhookDeliveries', 200));
      api.route('postDossier', echo('postDossier', 202));
      api.route('listAdminJobs', echo('listAdminJobs', 200));
    },
  };
}

interface Rig {
  url: string;
  upstream: RecordingServer;
  clock: TestClock;
  seen: Seen[];
  kernel: Kernel;
  send(
    method: string,
    path: string,
    options?: { key?: string | null; headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; headers: Record<string, unknown>; body: any }>;
}

async function rig(t: Test, config: Record<string, unknown> = {}): Promise<Rig> {
  const upstream = await startRecordingServer((_req, res) => answerJson(res, 200, PAGE));
  const store = await createEmbeddedStore({});
  const queue = createEmbeddedQueue();
  const clock = new TestClock({ frozen: true });
  const seen: Seen[] = [];
  const resolved = resolveConfig(
    {
      mode: 'development',
      host: '127.0.0.1',
      logLevel: 'silent',
      plugins: [],
      addressRateLimit: { perSecond: 1000, burst: 1000, freeFailures: 1000 },
      ...config,
      opcos: { up: { adapter: INLINE_ADAPTER, baseUrl: upstream.url, apiKeyEnv: 'UP_KEY' } },
    },
    { OPCO_PROXY_MASTER_KEY: '0f'.repeat(32), OPCO_PROXY_ADMIN_KEY: ADMIN_KEY, UP_KEY: 'gateway' },
  );
  const kernel = await createKernel(resolved, { store, queue, clock, plugins: [echoPlugin(seen)] });
  t.teardown(async () => {
    await kernel.close({ graceMs: 500 });
    await queue.close();
    await store.close();
    await upstream.close();
  });
  const url = await kernel.listen(0, '127.0.0.1');
  return {
    url,
    upstream,
    clock,
    seen,
    kernel,
    async send(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key !== null) headers['x-api-key'] = options.key ?? KEY;
      if (options.body !== undefined) headers['content-type'] ??= 'application/json';
      const response = await request(url + path, { method: method as never, headers, body: options.body });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** An answer in the error shape of SPEC 7 with this status and code. */
function isError(t: Test, reply: { status: number; body: any }, status: number, code: string, message?: string): void {
  t.equal(reply.status, status, message ?? code);
  t.match(reply.body, { status: 'error', code, description: String }, `${code} in the error shape`);
}

t.test('operations are routed by the manifest, with their path parameters and checked input', async (t) => {
  const r = await rig(t);
  const started = await r.send('POST', '/sync/dossiers', { body: JSON.stringify({ opcoId: 'up', minYear: 2020 }) });
  t.same([started.status, started.body], [202, { operation: 'startSync' }]);
  t.match(r.seen[0], { operation: 'startSync', body: { opcoId: 'up', minYear: 2020 }, tenant: tenantHash(KEY) });
  const sync = await r.send('GET', '/sync/s-1');
  t.equal(sync.status, 200);
  t.match(r.seen[1], { operation: 'getSync', params: { syncId: 's-1' } });
  const logs = await r.send('GET', '/webhooks/w-1/logs?status=failed&limit=5');
  t.equal(logs.status, 200);
  t.match(r.seen[2], {
    operation: 'listWebhookDeliveries',
    params: { id: 'w-1' },
    query: { status: 'failed', limit: '5' },
  });
});

t.test('a literal path is matched before /{opcoId}/, whatever the order of mounting', async (t) => {
  const r = await rig(t);
  const reply = await r.send('GET', '/sync/status');
  t.same(reply.body, { operation: 'getSync' }, '/sync/status is a sync, not the status of an opcoId "sync"');
  t.same(
    r.seen.map((s) => s.params),
    [{ syncId: 'status' }],
  );
});

t.test("the kernel's read routes: an unknown opcoId is 404, a route its profile lacks is 501", async (t) => {
  const r = await rig(t);
  const etats = await r.send('GET', '/up/dossiers/etats');
  t.same([etats.status, etats.body], [200, PAGE]);
  t.match(r.upstream.received[0].headers, { 'x-api-key': KEY, 'x-gateway-key': 'gateway' });
  isError(t, await r.send('GET', '/nowhere/dossiers/etats'), 404, 'NOT_FOUND');
  isError(t, await r.send('GET', '/up/cfakeyinfo?siren=123456789&XAPIKEY=k'), 501, 'NOT_SUPPORTED');
  t.equal(r.upstream.received.length, 1, 'neither went upstream');
});

t.test('X-API-KEY: missing, malformed or not allowed is 403, before any handler', async (t) => {
  const r = await rig(t, { allowedTenants: [tenantHash(KEY)] });
  isError(t, await r.send('GET', '/sync/s', { key: null }), 403, 'HTTP_ERROR', 'missing');
  isError(t, await r.send('GET', '/sync/s', { key: 'short' }), 403, 'HTTP_ERROR', 'malformed');
  isError(t, await r.send('GET', '/sync/s', { key: 'another-key-0002' }), 403, 'HTTP_ERROR', 'not in allowedTenants');
  t.equal(r.seen.length, 0);
  t.equal((await r.send('GET', '/sync/s')).status, 200, 'the allowed key passes');
});

t.test('operator operations take the admin key as a bearer token, not a tenant key', async (t) => {
  const r = await rig(t);
  const missing = await r.send('GET', '/admin/jobs', { key: null });
  isError(t, missing, 401, 'UNAUTHORIZED');
  t.match(missing.headers['www-authenticate'], /^Bearer /);
  isError(
    t,
    await r.send('GET', '/admin/jobs', { headers: { authorization: `Bearer ${KEY}-wrong-wrong` } }),
    401,
    'UNAUTHORIZED',
    'a tenant key is no operator key',
  );
  t.equal(
    (await r.send('GET', '/admin/jobs', { key: null, headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status,
    200,
  );
  t.same(
    r.seen.map((s) => s.operation),
    ['listAdminJobs'],
  );
  t.equal((await r.send('GET', '/health', { key: null })).status, 200, 'system routes need no key');
});

t.test('wrong operator keys back off per address', async (t) => {
  const r = await rig(t, { addressRateLimit: { perSecond: 1000, burst: 1000, freeFailures: 2, maxBackoffS: 60 } });
  const wrong = () => r.send('GET', '/admin/jobs', { key: null, headers: { authorization: 'Bearer nope' } });
  isError(t, await wrong(), 401, 'UNAUTHORIZED');
  isError(t, await wrong(), 401, 'UNAUTHORIZED');
  isError(t, await wrong(), 401, 'UNAUTHORIZED', 'the third still counts');
  const held = await r.send('GET', '/admin/jobs', { key: null, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  isError(t, held, 429, 'RATE_LIMITED', 'then the address waits, right key or not');
  t.ok(Number(held.headers['retry-after']) >= 1, 'with Retry-After');
  await r.clock.advance(61_000);
  t.equal(
    (await r.send('GET', '/admin/jobs', { key: null, headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status,
    200,
    'and the right key works once it has waited',
  );
});

t.test('each tenant has its own rate: 429 with Retry-After once its burst is spent', async (t) => {
  const r = await rig(t, { tenantRateLimit: { perSecond: 1, burst: 2 } });
  t.equal((await r.send('GET', '/sync/a')).status, 200);
  t.equal((await r.send('GET', '/sync/a')).status, 200);
  const refused = await r.send('GET', '/sync/a');
  isError(t, refused, 429, 'RATE_LIMITED');
  t.equal(refused.headers['retry-after'], '1');
  t.equal((await r.send('GET', '/sync/a', { key: 'tenant-key-0002' })).status, 200, 'another tenant is not held back');
  await r.clock.advance(1000);
  t.equal((await r.send('GET', '/sync/a')).status, 200, 'a token comes back each second');
  t.equal(r.seen.length, 4);
});

t.test("bodies: JSON only, within bodyBytes and fileBytes, valid against the operation's schema", async (t) => {
  const r = await rig(t, { limits: { bodyBytes: 2000, fileBytes: 10 } });
  isError(
    t,
    await r.send('POST', '/sync/dossiers', {
      body: 'opcoId=up',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  isError(
    t,
    await r.send('POST', '/sync/dossiers', { body: JSON.stringify({ opcoId: 'x'.repeat(3000) }) }),
    413,
    'PAYLOAD_TOO_LARGE',
  );
  isError(t, await r.send('POST', '/sync/dossiers', { body: '{"opcoId":' }), 400, 'VALIDATION_ERROR', 'broken JSON');
  const invalid = await r.send('POST', '/sync/dossiers', {
    body: JSON.stringify({ opcoId: 'up', minYear: 1999, extra: 1 }),
  });
  isError(t, invalid, 400, 'VALIDATION_ERROR');
  t.ok(
    invalid.body.errors.some((e: string) => e.startsWith('minYear')),
    `minYear is named: ${invalid.body.errors}`,
  );
  t.ok(invalid.body.errors.length >= 2, 'every problem is listed');
  const cerfa = {
    employeur: { siret: '1' },
    apprenti: { nom: 'N', prenom: 'P' },
    contrat: { dateDebutContrat: '2024-09-01' },
    formation: {},
    organismeFormation: {},
  };
  const file = (bytes: number) =>
    JSON.stringify({ cerfa, _files: { cerfa: Buffer.alloc(bytes, 1).toString('base64') } });
  isError(
    t,
    await r.send('POST', '/up/dossiers', { body: file(11) }),
    413,
    'PAYLOAD_TOO_LARGE',
    'a file over fileBytes',
  );
  const accepted = await r.send('POST', '/up/dossiers', { body: file(10) });
  t.equal(accepted.status, 202, 'a file at the limit');
  t.same(
    r.seen.map((s) => s.operation),
    ['postDossier'],
    'only valid bodies reached a handler',
  );
});

t.test('queries: checked against the schema, a repeated parameter refused', async (t) => {
  const r = await rig(t);
  const repeated = await r.send('GET', '/webhooks/w/logs?status=failed&status=delivered');
  isError(t, repeated, 400, 'VALIDATION_ERROR');
  t.same(repeated.body.errors, ['status: must be given once']);
  isError(t, await r.send('GET', '/webhooks/w/logs?limit=1000'), 400, 'VALIDATION_ERROR', 'out of range');
  isError(t, await r.send('GET', '/webhooks/w/logs?unknown=1'), 400, 'VALIDATION_ERROR', 'an unknown parameter');
  t.equal(r.seen.length, 0);
});

t.test('methods: 405 with Allow on a known path, 204 to OPTIONS, 501 for a method no route takes', async (t) => {
  const r = await rig(t);
  const wrong = await r.send('PUT', '/sync/dossiers', { body: '{}' });
  isError(t, wrong, 405, 'METHOD_NOT_ALLOWED');
  const allow = String(wrong.headers.allow).split(/,\s*/).sort();
  t.same(allow, ['GET', 'HEAD', 'POST'], 'POST to start a sync, GET (and HEAD) of a sync whose id is "dossiers"');
  const options = await r.send('OPTIONS', '/sync/s-1', { key: null });
  t.equal(options.status, 204);
  t.match(options.headers.allow, /GET/);
  isError(t, await r.send('PROPFIND', '/sync/dossiers'), 501, 'NOT_SUPPORTED');
  isError(t, await r.send('GET', '/no/such/path/here'), 404, 'NOT_FOUND');
  t.equal(r.seen.length, 0);
});

t.test('a key the upstream refused is answered 403 at the edge, without another upstream call', async (t) => {
  const r = await rig(t);
  r.upstream.answer((_req, res) => answerJson(res, 403, { message: 'unknown key' }));
  isError(t, await r.send('GET', '/up/dossiers/etats'), 403, 'HTTP_ERROR', 'the upstream refused it');
  isError(t, await r.send('GET', '/up/dossiers/etats?numeroPage=2'), 403, 'HTTP_ERROR', 'refused again');
  isError(
    t,
    await r.send('POST', '/up/dossiers', { body: '{}' }),
    403,
    'HTTP_ERROR',
    'on every route that reaches that upstream',
  );
  t.equal(r.upstream.received.length, 1, 'one upstream call');
  t.equal(r.seen.length, 0, 'the handler was not reached');
  t.equal(
    (await r.send('GET', '/up/dossiers/etats', { key: 'tenant-key-0002' })).status,
    403,
    'another key is asked about on its own',
  );
  t.equal(r.upstream.received.length, 2);
});

t.test(
  "unproven keys spend their address's tokens on upstream reads; proven ones do not; own records cost nothing",
  async (t) => {
    const r = await rig(t, { addressRateLimit: { perSecond: 1, burst: 2, freeFailures: 1000 } });
    t.equal(
      (await r.send('GET', '/up/dossiers/etats', { key: 'proven-key-0001' })).status,
      200,
      'the upstream accepts this key: proven (one token, unproven when it came)',
    );
    for (let i = 0; i < 5; i++)
      t.equal(
        (await r.send('GET', '/sync/a', { key: `stranger-000${i}` })).status,
        200,
        'reads of their own records take no token (issue 37)',
      );
    t.equal((await r.send('GET', '/up/dossiers/etats', { key: 'stranger-0001' })).status, 200, 'the second token');
    const spent = await r.send('GET', '/up/dossiers/etats', { key: 'stranger-0002' });
    isError(t, spent, 429, 'RATE_LIMITED', 'the address has spent its burst on unproven keys');
    t.ok(Number(spent.headers['retry-after']) >= 1);
    for (let i = 0; i < 3; i++)
      t.equal(
        (await r.send('GET', '/sync/a', { key: 'proven-key-0001' })).status,
        200,
        'a proven key from that address still passes',
      );
  },
);

t.test('D32: an audited operation records each outcome once the caller is known, refusals included', async (t) => {
  const r = await rig(t);
  t.equal((await r.send('POST', '/sync/dossiers', { body: JSON.stringify({ opcoId: 'up' }) })).status, 202);
  await r.clock.advance(1000); // records of one millisecond have no order between them
  t.equal((await r.send('POST', '/sync/dossiers', { body: JSON.stringify({ opcoId: 'up', minYear: 1 }) })).status, 400);
  t.equal((await r.send('POST', '/sync/dossiers', { key: null, body: '{}' })).status, 403, 'an unknown caller');
  t.equal((await r.send('GET', '/sync/s-1')).status, 200, 'a read that is not audited');
  const audit = await r.send('GET', '/audit');
  t.equal(audit.status, 200);
  const records = audit.body.items.map((i: any) => ({
    action: i.action,
    actor: i.actor,
    tenant: i.tenant,
    opcoId: i.opcoId,
    outcome: i.outcome,
  }));
  t.same(
    records,
    [
      {
        action: 'startSync',
        actor: 'tenant',
        tenant: tenantHash(KEY),
        opcoId: 'up',
        outcome: { status: 400, code: 'VALIDATION_ERROR' },
      },
      { action: 'startSync', actor: 'tenant', tenant: tenantHash(KEY), opcoId: 'up', outcome: { status: 202 } },
    ],
    'newest first; the caller without a key has no record of its own',
  );
  t.ok(audit.body.items.every((i: any) => typeof i.requestId === 'string' && i.clientAddress === '127.0.0.1'));
  t.same((await r.send('GET', '/audit', { key: 'tenant-key-0002' })).body.items, [], 'each tenant sees its own');
});
