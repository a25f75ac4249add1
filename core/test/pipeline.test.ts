// The request pipeline of SPEC 1.1, steps 3 to 10, on a real upstream: the cache lookup and
// store hooks, the profile's transforms, admission leases and their release, the D10 refresh
// admitted on its own, drift warnings, the 60-second window (D13) and the tenant's standing.
import t, { type Test } from 'tap';
import {
  Hooks,
  MetricsWindow,
  Pipeline,
  TenantStanding,
  TestClock,
  UpstreamClient,
  createEmbeddedStore,
  createLogger,
  createPrometheusMetrics,
  rename,
  uppercase,
  type AdmissionProvider,
  type AdmissionRequest,
  type CallContext,
  type Opco,
  type UpstreamOutcome,
} from '../src/application.js';
import { callContext, inlineOpco } from './fixtures/inline-profile.js';
import {
  answerJson,
  startRecordingServer,
  type RecordingAnswer,
  type RecordingServer,
} from '../src/testing/recording-server.js';

const PAGE = { status: 'ok', EtatDossierResult: [] };

/** An admission provider that grants every call a numbered lease and records what it saw. */
class RecordingAdmission implements AdmissionProvider {
  readonly name = 'recording';
  readonly requests: AdmissionRequest[] = [];
  readonly released: UpstreamOutcome[] = [];
  refuse?: Error;
  failRelease = false;

  async admit(request: AdmissionRequest) {
    this.requests.push(request);
    if (this.refuse) throw this.refuse;
    const n = this.requests.length;
    return {
      headers: { 'Svc-Hub-Token': `grant-${n}` },
      release: (outcome: UpstreamOutcome) => {
        this.released.push(outcome);
        if (this.failRelease) throw new Error('the budget store is down');
      },
    };
  }
}

interface Rig {
  upstream: RecordingServer;
  pipeline: Pipeline;
  hooks: Hooks;
  admission: RecordingAdmission;
  window: MetricsWindow;
  prometheus: ReturnType<typeof createPrometheusMetrics>;
  standing: TenantStanding;
  opco: Opco;
  clock: TestClock;
  ctx(route: Parameters<typeof callContext>[1], changes?: Partial<CallContext>): CallContext;
}

async function rig(
  t: Test,
  answer: RecordingAnswer = (_req, res) => answerJson(res, 200, PAGE),
  refusable = false,
  routes?: Opco['profile']['routes'],
): Promise<Rig> {
  const upstream = await startRecordingServer(answer);
  const client = new UpstreamClient({
    publisher: { editeur: 'e', logiciel: 'l', version: 'v' },
    timeoutMs: 2000,
    maxAnswerBytes: 1 << 20,
  });
  const store = await createEmbeddedStore({});
  t.teardown(async () => {
    await client.close();
    await upstream.close();
    await store.close();
  });
  const opco = inlineOpco(
    upstream.url,
    routes ?? { 'GET /dossiers/etats': { upstream: '/etats' }, 'POST /dossiers': { upstream: '/dossiers' } },
  );
  let token = 0;
  client.authenticate(opco.id, {
    headers: async () => ({ authorization: `Bearer t${++token}` }),
    refused: () => refusable,
  });
  const clock = new TestClock();
  const hooks = new Hooks();
  const admission = new RecordingAdmission();
  const window = new MetricsWindow(clock);
  const prometheus = createPrometheusMetrics();
  const standing = new TenantStanding(store, clock, { provenTtlS: 3600, refusedTtlS: 60 });
  const pipeline = new Pipeline({
    hooks,
    client,
    admission: () => admission,
    window,
    prometheus,
    log: createLogger({ level: 'silent' }),
    clock,
    standing,
    unprovenShare: 0.5,
  });
  return {
    upstream,
    pipeline,
    hooks,
    admission,
    window,
    prometheus,
    standing,
    opco,
    clock,
    ctx: (route, changes) => callContext(opco, route, changes, clock),
  };
}

async function counter(prometheus: Rig['prometheus'], name: string): Promise<Array<{ labels: object; value: number }>> {
  const metric = (await prometheus.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values ?? [];
}

t.test('step 3: a lookup hit answers with the kept JSON, and nothing goes upstream', async (t) => {
  const r = await rig(t);
  r.hooks.add('lookup', () => ({ json: '{"kept":true}', source: 'memory' }));
  const ctx = r.ctx('GET /dossiers/etats');
  t.same(await r.pipeline.serve(ctx), { json: '{"kept":true}' });
  t.equal(ctx.cache, 'hit');
  t.same(await r.pipeline.run(r.ctx('GET /dossiers/etats')), { kept: true }, 'run parses it');
  t.equal(r.upstream.received.length, 0);
  t.equal(r.admission.requests.length, 0, 'no budget spent');
});

t.test('a miss, or a fresh call, goes upstream; a successful GET is offered to the store hooks', async (t) => {
  const r = await rig(t);
  const stored: CallContext[] = [];
  r.hooks.add('lookup', () => ({ json: '{}', source: 'memory' }));
  r.hooks.add('store', (ctx) => void stored.push(ctx));
  const fresh = r.ctx('GET /dossiers/etats', { fresh: true });
  t.same(await r.pipeline.run(fresh), PAGE, 'fresh skips the lookup');
  t.equal(fresh.cache, 'none');
  t.equal(stored.length, 1, 'and stores what came');
  const r2 = await rig(t);
  r2.hooks.add('lookup', () => undefined);
  const missed = r2.ctx('GET /dossiers/etats');
  await r2.pipeline.run(missed);
  t.equal(missed.cache, 'miss', 'a lookup that does not answer is a miss');
  t.equal(r2.upstream.received.length, 1);
});

t.test('a POST is never looked up nor stored', async (t) => {
  const r = await rig(t, (_req, res) => answerJson(res, 201, { id: 'd' }));
  let looked = 0;
  let stored = 0;
  r.hooks.add('lookup', () => void looked++);
  r.hooks.add('store', () => void stored++);
  t.same(await r.pipeline.run(r.ctx('POST /dossiers', { body: {} })), { id: 'd' });
  t.same([looked, stored], [0, 0]);
});

t.test('step 5: the profile transforms the request, then beforeCall hooks; step 7 transforms the answer', async (t) => {
  const routes = {
    'GET /dossiers/etats': {
      upstream: '/etats',
      request: [uppercase(['etat'])],
      response: [rename({ upstreamTotal: 'total' })],
    },
    'POST /dossiers': { upstream: '/dossiers', request: [rename({ siret: 'numeroSiret' })] },
  };
  const r = await rig(t, (_req, res) => answerJson(res, 200, { ...PAGE, upstreamTotal: 3 }), false, routes);
  const seen: unknown[] = [];
  r.hooks.add('beforeCall', (ctx) => {
    seen.push(ctx.method === 'GET' ? ctx.query : ctx.body);
    ctx.upstreamHeaders['x-from-hook'] = 'yes';
  });
  t.same(await r.pipeline.run(r.ctx('GET /dossiers/etats', { query: { etat: 'clos' } })), { ...PAGE, total: 3 });
  await r.pipeline.run(r.ctx('POST /dossiers', { body: { siret: '1' } }));
  t.same(seen, [{ etat: 'CLOS' }, { numeroSiret: '1' }], 'hooks see the transformed request');
  t.equal(r.upstream.received[0].path, '/etats?etat=CLOS');
  t.same(JSON.parse(r.upstream.received[1].body.toString()), { numeroSiret: '1' });
  t.equal(r.upstream.received[1].headers['x-from-hook'], 'yes');
});

t.test('step 4: each call is admitted, carries its lease headers, and releases with its outcome', async (t) => {
  const r = await rig(t);
  await r.pipeline.run(r.ctx('GET /dossiers/etats'));
  t.match(r.admission.requests[0], {
    opcoId: 'up',
    route: 'GET /dossiers/etats',
    method: 'GET',
    tenant: 'tenant-hash',
    synchronous: true,
    proven: false,
    unprovenLimit: 50,
  });
  t.equal(r.upstream.received[0].headers['svc-hub-token'], 'grant-1');
  t.match(r.admission.released, [{ status: 200 }]);
  r.upstream.answer((_req, res) => answerJson(res, 500, {}));
  await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'UPSTREAM_ERROR', status: 500 });
  t.match(r.admission.released[1], { status: 500 }, "the upstream's status");
  await r.upstream.close();
  await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'NETWORK_ERROR' });
  t.match(r.admission.released[2], { status: 0 }, 'no answer is status 0');
});

t.test('a refused admission ends the call before it goes out', async (t) => {
  const r = await rig(t);
  r.admission.refuse = Object.assign(new Error('spent'), { code: 'RATE_LIMITED' });
  await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'RATE_LIMITED' });
  t.equal(r.upstream.received.length, 0);
  r.admission.refuse = undefined;
  t.same(
    await r.pipeline.run(r.ctx('GET /dossiers/etats')),
    PAGE,
    "the tenant's next call is not held back by the first",
  );
});

t.test('a release that fails does not fail a call that has happened', async (t) => {
  const r = await rig(t);
  r.admission.failRelease = true;
  t.same(await r.pipeline.run(r.ctx('GET /dossiers/etats')), PAGE);
});

t.test('D10: a curable 401 is called again once, admitted on its own with fresh credentials', async (t) => {
  let calls = 0;
  const r = await rig(t, (_req, res) => (++calls === 1 ? answerJson(res, 401, {}) : answerJson(res, 200, PAGE)), true);
  t.same(await r.pipeline.run(r.ctx('GET /dossiers/etats')), PAGE);
  t.equal(r.admission.requests.length, 2, 'two admissions');
  t.match(r.admission.released, [{ status: 401 }, { status: 200 }]);
  t.same(
    r.upstream.received.map((q) => [q.headers.authorization, q.headers['svc-hub-token']]),
    [
      ['Bearer t1', 'grant-1'],
      ['Bearer t2', 'grant-2'],
    ],
  );
  calls = 0;
  r.upstream.answer((_req, res) => answerJson(res, 401, {}));
  await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'HTTP_ERROR' }, 'a second 401 is the answer');
  t.equal(r.upstream.received.length, 4, 'and there is no third call');
});

t.test('step 8: drift from the schema is a warning, counted; a missing required field is unusable', async (t) => {
  const drifted = { ...PAGE, total: 'three' };
  const r = await rig(t, (_req, res) => answerJson(res, 200, drifted));
  const ctx = r.ctx('GET /dossiers/etats');
  t.same(await r.pipeline.run(ctx), drifted, 'the drifted answer is returned');
  t.ok(ctx.warnings.length > 0, `warnings: ${ctx.warnings.join('; ')}`);
  t.match(await counter(r.prometheus, 'opco_proxy_response_drift_warnings_total'), [
    { value: 1, labels: { opco: 'up' } },
  ]);
  const clean = r.ctx('GET /dossiers/etats');
  r.upstream.answer((_req, res) => answerJson(res, 200, PAGE));
  await r.pipeline.run(clean);
  t.same(clean.warnings, []);
  r.upstream.answer((_req, res) => answerJson(res, 200, { status: 'ok' }));
  await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
  r.upstream.answer((_req, res) => answerJson(res, 200, [PAGE]));
  await t.rejects(
    r.pipeline.run(r.ctx('GET /dossiers/etats')),
    { code: 'UPSTREAM_INVALID_RESPONSE' },
    'an answer that is no object',
  );
});

t.test("step 9: the window counts upstream failures, not answers about the client's input (D13)", async (t) => {
  let status = 200;
  const r = await rig(t, (_req, res) => answerJson(res, status, status === 200 ? PAGE : {}));
  for (const next of [200, 404, 400, 500, 503]) {
    status = next;
    await r.pipeline.run(r.ctx('GET /dossiers/etats')).catch(() => undefined);
  }
  t.match(r.window.snapshot('up'), { requests: 5, errors: 2 });
  const calls = await counter(r.prometheus, 'opco_proxy_upstream_calls_total');
  t.same(calls.map((c) => (c.labels as { status: string }).status).sort(), ['200', '400', '404', '500', '503']);
});

t.test(
  'step 9: a call that got no answer is counted as timeout or network, not as the 504 or 502 it answers',
  async (t) => {
    const r = await rig(t, () => undefined);
    await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'TIMEOUT', status: 504 });
    await r.upstream.close();
    await t.rejects(r.pipeline.run(r.ctx('GET /dossiers/etats')), { code: 'NETWORK_ERROR', status: 502 });
    const calls = await counter(r.prometheus, 'opco_proxy_upstream_calls_total');
    t.same(calls.map((c) => (c.labels as { status: string }).status).sort(), ['network', 'timeout']);
  },
);

t.test('what the upstream says of the key is kept: refused keys stop at the pipeline', async (t) => {
  let status = 200;
  const r = await rig(t, (_req, res) => answerJson(res, status, status === 200 ? PAGE : {}));
  const proven = r.ctx('GET /dossiers/etats', { tenant: { hash: 'good', apiKey: 'g' } });
  await r.pipeline.run(proven);
  t.equal(await r.standing.of('up', 'good'), 'proven');
  await r.pipeline.run(r.ctx('GET /dossiers/etats', { tenant: { hash: 'good', apiKey: 'g' } }));
  t.equal(r.admission.requests[1].proven, true, 'a proven key is admitted as proven');
  status = 403;
  const bad = () => r.ctx('GET /dossiers/etats', { tenant: { hash: 'bad', apiKey: 'b' } });
  await t.rejects(r.pipeline.run(bad()), { code: 'HTTP_ERROR', status: 403 });
  t.equal(await r.standing.of('up', 'bad'), 'refused');
  const sent = r.upstream.received.length;
  await t.rejects(r.pipeline.run(bad()), { code: 'HTTP_ERROR', status: 403 }, 'refused again');
  t.equal(r.upstream.received.length, sent, 'without a call');
  t.match(await counter(r.prometheus, 'opco_proxy_key_refusals_total'), [{ value: 1 }]);
  await r.clock.advance(61_000);
  status = 200;
  t.same(await r.pipeline.run(bad()), PAGE, 'tried again once refusedTtlS has passed');
});

t.test('peek: a GET answered at once from what a peek hook holds', async (t) => {
  const r = await rig(t);
  t.equal(r.pipeline.peek(r.ctx('GET /dossiers/etats')), undefined, 'nothing held');
  r.hooks.add('peek', () => ({ json: Buffer.from('[1]'), source: 'memory' }));
  const ctx = r.ctx('GET /dossiers/etats');
  t.same(r.pipeline.peek(ctx), Buffer.from('[1]'));
  t.equal(ctx.cache, 'hit');
  t.equal(r.pipeline.peek(r.ctx('GET /dossiers/etats', { fresh: true })), undefined, 'not for a fresh read');
  t.equal(r.pipeline.peek(r.ctx('POST /dossiers')), undefined, 'nor a POST');
});
