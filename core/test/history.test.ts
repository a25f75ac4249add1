// Issue 42, point 1: every instance's counts minute by minute in the store. Kernels on the
// embedded store and a frozen TestClock, so that a minute ends exactly when the test says; the
// counters are the kernel's own (what the request path increments), and the jobs and webhooks
// plugins' counters are registered here as those plugins name them. GET /admin/history through
// HTTP on a free port.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter } from 'prom-client';
import { request } from 'undici';
import { validate } from '@opco-proxy/schemas';
import {
  ConfigError,
  DAY_MS,
  HISTORY_COLLECTION,
  HistoryLog,
  MINUTE_MS,
  StoreUnavailableError,
  TestClock,
  createEmbeddedQueue,
  createEmbeddedStore,
  createKernel,
  minuteOf,
  resolveConfig,
  type Collection,
  type Doc,
  type HistoryDoc,
  type HistoryPoint,
  type Kernel,
  type Plugin,
  type Queue,
  type Store,
} from '../src/application.js';
import { eventually } from '../src/testing/index.js';
import { INLINE_ADAPTER } from './fixtures/inline-adapter.js';

const ADMIN_KEY = 'a'.repeat(40);
const ENV = { OPCO_PROXY_MASTER_KEY: '0f'.repeat(32), OPCO_PROXY_ADMIN_KEY: ADMIN_KEY, UP_KEY: 'gateway' };
const WRITES = new Set(['insertOne', 'insertMany', 'findOneAndUpdate', 'updateMany']);

/**
 * The embedded store as it is, with the calls made to the `history` collection written down
 * (and, when asked, the next writes refused as a store that is down refuses them).
 */
class CountedStore implements Store {
  readonly calls: string[] = [];
  refuseWrites = 0;
  constructor(private readonly inner: Store) {}
  get kind() {
    return this.inner.kind;
  }
  get shared() {
    return this.inner.shared;
  }
  writes(): number {
    return this.calls.filter((call) => WRITES.has(call)).length;
  }
  collection<T extends Doc = Doc>(name: string): Collection<T> {
    const collection = this.inner.collection<T>(name);
    if (name !== HISTORY_COLLECTION) return collection;
    return new Proxy(collection, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          this.calls.push(String(property));
          if (WRITES.has(String(property)) && this.refuseWrites > 0) {
            this.refuseWrites -= 1;
            return Promise.reject(new StoreUnavailableError('store down'));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}

interface Rig {
  kernel: Kernel;
  url: string;
  get(path: string, key?: string | null): Promise<{ status: number; body: any }>;
}

interface RigOptions {
  clock: TestClock;
  store?: Store;
  queue?: Queue;
  /** A directory: the kernel opens (and closes) its own embedded store there. */
  dataDir?: string;
  history?: Record<string, unknown>;
  plugins?: Plugin[];
}

async function start(t: Test, options: RigOptions): Promise<Rig> {
  const config = resolveConfig(
    {
      mode: 'development',
      host: '127.0.0.1',
      logLevel: 'silent',
      plugins: [],
      ...(options.dataDir ? { store: { type: 'embedded', path: options.dataDir } } : {}),
      ...(options.history ? { history: options.history } : {}),
      opcos: {
        up: { adapter: INLINE_ADAPTER, baseUrl: 'http://127.0.0.1:9', apiKeyEnv: 'UP_KEY' },
        down: {
          adapter: INLINE_ADAPTER,
          baseUrl: 'http://127.0.0.1:9',
          apiKeyEnv: 'UP_KEY',
          rateLimit: { limit: 30, windowMs: 10_000 },
        },
      },
    },
    ENV,
  );
  const kernel = await createKernel(config, {
    store: options.store,
    queue: options.queue,
    clock: options.clock,
    plugins: options.plugins,
  });
  t.teardown(() => kernel.close({ graceMs: 500 }));
  const url = await kernel.listen(0, '127.0.0.1');
  return {
    kernel,
    url,
    async get(path, key = ADMIN_KEY) {
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      const response = await request(url + path, { headers });
      return { status: response.statusCode, body: await response.body.json() };
    },
  };
}

async function sharedBackends(t: Test): Promise<{ store: CountedStore; queue: Queue }> {
  const store = new CountedStore(await createEmbeddedStore({}));
  const queue = createEmbeddedQueue();
  t.teardown(async () => {
    await queue.close();
    await store.close();
  });
  return { store, queue };
}

/** The counters of the jobs and webhooks plugins, as they name them, in a kernel's registry. */
function pluginCounters(kernel: Kernel) {
  const registers = [kernel.prometheus.registry];
  return {
    jobsSubmitted: new Counter({ name: 'opco_proxy_jobs_submitted_total', help: '-', labelNames: ['opco'], registers }),
    jobsEnded: new Counter({
      name: 'opco_proxy_jobs_ended_total',
      help: '-',
      labelNames: ['opco', 'type', 'status'],
      registers,
    }),
    attempts: new Counter({ name: 'opco_proxy_webhook_attempts_total', help: '-', labelNames: ['outcome'], registers }),
  };
}

function minutes(store: Store): Promise<HistoryDoc[]> {
  return store.collection<HistoryDoc>(HISTORY_COLLECTION).find({}, { sort: { _id: 1 } });
}

/** A frozen clock at the start of a minute, so that a test's seconds stay within the minute it means. */
async function minuteClock(): Promise<TestClock> {
  const clock = new TestClock({ frozen: true });
  await endMinute(clock);
  return clock;
}

/** Moves the clock to the end of the minute in progress; the recorder's timer rings there. */
async function endMinute(clock: TestClock): Promise<void> {
  await clock.advance(minuteOf(clock.now()) + MINUTE_MS - clock.now());
}

function sorted(points: HistoryPoint[]): HistoryPoint[] {
  const key = (p: HistoryPoint) => `${p.series}${JSON.stringify(p.labels)}`;
  return [...points].sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

const iso = (ms: number) => new Date(ms).toISOString();

t.test(
  'counts land in the minute they were counted in: one write per instance and minute, none for a quiet one',
  async (t) => {
    const clock = await minuteClock();
    const { store, queue } = await sharedBackends(t);
    const { kernel } = await start(t, { clock, store, queue });
    const { httpRequests, upstreamCalls, budgetCalls } = kernel.prometheus;
    const { jobsSubmitted, jobsEnded, attempts } = pluginCounters(kernel);
    const m0 = minuteOf(clock.now());

    httpRequests.inc({ route: '/{opcoId}/dossiers/etats', method: 'GET', status: '200' }, 3);
    httpRequests.inc({ route: '/jobs/{jobId}', method: 'GET', status: '200' });
    httpRequests.inc({ route: '/{opcoId}/dossiers/etats', method: 'GET', status: '429' }, 2);
    upstreamCalls.inc({ opco: 'up', route: 'GET /dossiers/etats', status: '200' }, 4);
    upstreamCalls.inc({ opco: 'up', route: 'POST /dossiers', status: '201' });
    upstreamCalls.inc({ opco: 'up', route: 'GET /dossiers/etats', status: '429' });
    upstreamCalls.inc({ opco: 'down', route: 'GET /dossiers/etats', status: 'timeout' });
    upstreamCalls.inc({ opco: 'down', route: 'GET /dossiers/etats', status: 'network' });
    upstreamCalls.inc({ opco: 'down', route: 'GET /dossiers/etats', status: '404' });
    budgetCalls.inc({ opco: 'up', tenant: 'proven' }, 5);
    budgetCalls.inc({ opco: 'up', tenant: 'unproven' }, 2);
    jobsSubmitted.inc({ opco: 'up' }, 3);
    jobsEnded.inc({ opco: 'up', type: 'post-dossier', status: 'completed' }, 2);
    jobsEnded.inc({ opco: 'up', type: 'post-facture', status: 'completed' });
    jobsEnded.inc({ opco: 'up', type: 'post-facture', status: 'failed' });
    attempts.inc({ outcome: 'delivered' }, 2);
    attempts.inc({ outcome: 'retrying' });
    await clock.advance(20_000);
    httpRequests.inc({ route: '/{opcoId}/dossiers/etats', method: 'GET', status: '503' });
    attempts.inc({ outcome: 'failed' });
    await clock.advance(20_000);
    t.equal(store.writes(), 0, 'nothing is written while the minute lasts');

    await endMinute(clock);
    await eventually(() => store.writes() === 1, 'the first minute written');
    const [first] = await minutes(store);
    t.match(first, { _id: `${m0}:${first.instance}`, minute: new Date(m0), expiresAt: new Date(m0 + 7 * DAY_MS) });
    t.match(first.instance, /^[0-9a-f]{16}$/, 'a random instance name');
    t.same(
      sorted(first.points),
      sorted([
        { series: 'requests', labels: { class: '2xx' }, value: 4 },
        { series: 'requests', labels: { class: '4xx' }, value: 2 },
        { series: 'requests', labels: { class: '429' }, value: 2 },
        { series: 'requests', labels: { class: '5xx' }, value: 1 },
        { series: 'upstream', labels: { opcoId: 'up', outcome: '2xx' }, value: 5 },
        { series: 'upstream', labels: { opcoId: 'up', outcome: '429' }, value: 1 },
        { series: 'upstream', labels: { opcoId: 'down', outcome: 'timeout' }, value: 1 },
        { series: 'upstream', labels: { opcoId: 'down', outcome: 'network' }, value: 1 },
        { series: 'upstream', labels: { opcoId: 'down', outcome: '4xx' }, value: 1 },
        { series: 'budget', labels: { opcoId: 'up' }, value: 7 },
        { series: 'jobs', labels: { opcoId: 'up', outcome: 'submitted' }, value: 3 },
        { series: 'jobs', labels: { opcoId: 'up', outcome: 'completed' }, value: 3 },
        { series: 'jobs', labels: { opcoId: 'up', outcome: 'failed' }, value: 1 },
        { series: 'deliveries', labels: { outcome: 'delivered' }, value: 2 },
        { series: 'deliveries', labels: { outcome: 'retrying' }, value: 1 },
        { series: 'deliveries', labels: { outcome: 'failed' }, value: 1 },
      ]),
      'the growth of each counter, by series and labels; zeros left out',
    );

    // Minute 1: nothing counted. Minute 2: counts at several moments, written once at its end.
    await endMinute(clock);
    for (let i = 0; i < 5; i++) {
      httpRequests.inc({ route: '/jobs/{jobId}', method: 'GET', status: '200' });
      await clock.advance(10_000);
    }
    upstreamCalls.inc({ opco: 'up', route: 'GET /dossiers/etats', status: '200' });
    await endMinute(clock);
    await eventually(() => store.writes() === 2, 'the third minute written');
    const all = await minutes(store);
    t.same(
      all.map((doc) => doc.minute.getTime() - m0),
      [0, 2 * MINUTE_MS],
      'a minute that counted nothing writes nothing',
    );
    t.same(
      sorted(all[1].points),
      sorted([
        { series: 'requests', labels: { class: '2xx' }, value: 5 },
        { series: 'upstream', labels: { opcoId: 'up', outcome: '2xx' }, value: 1 },
      ]),
      "only the minute's own growth",
    );
    t.equal(store.writes(), 2, 'three minutes, two with counts: two writes');
  },
);

t.test('queue depths are read as they are at the end of each minute; an empty queue is left out', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const declares: Plugin = {
    name: 'declares',
    register(api) {
      api.declareQueue('work');
      api.declareQueue('idle');
    },
  };
  await start(t, { clock, store, queue, plugins: [declares] });
  for (let i = 0; i < 3; i++) await queue.publish('work', { id: i });
  await endMinute(clock);
  await eventually(() => store.writes() === 1, 'the first minute written');
  await queue.publish('work', { id: 3 });
  await endMinute(clock);
  await eventually(() => store.writes() === 2, 'the second minute written');
  const [first, second] = await minutes(store);
  t.same(first.points, [{ series: 'queues', labels: { queue: 'work' }, value: 3 }]);
  t.same(second.points, [{ series: 'queues', labels: { queue: 'work' }, value: 4 }], 'the level, not its growth');
});

t.test('a queue that does not answer holds the minute 2 s at most; its depth is left out', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const hung: Queue = Object.assign(Object.create(queue) as Queue, { depth: () => new Promise<never>(() => {}) });
  const declares: Plugin = { name: 'declares', register: (api) => api.declareQueue('work') };
  const r = await start(t, { clock, store, queue: hung, plugins: [declares] });
  r.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' });
  await endMinute(clock);
  await clock.advance(1999);
  t.equal(store.writes(), 0, 'the minute waits for the depth');
  await clock.advance(1);
  await eventually(() => store.writes() === 1, 'the minute written once the wait is over');
  const [doc] = await minutes(store);
  t.same(doc.points, [{ series: 'requests', labels: { class: '2xx' }, value: 1 }]);
  // Its close waits for the depth too, as long, on the clock.
  let closed = false;
  void r.kernel.close({ graceMs: 500 }).then(() => (closed = true));
  await eventually(async () => (await clock.advance(500), closed), 'the kernel closed');
});

t.test('two instances write apart; GET /admin/history sums them, in the schema, behind the operator key', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const a = await start(t, { clock, store, queue });
  const b = await start(t, { clock, store, queue });
  const m0 = minuteOf(clock.now());
  a.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 3);
  a.kernel.prometheus.upstreamCalls.inc({ opco: 'up', route: 'GET /dossiers/etats', status: '200' }, 2);
  b.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 4);
  b.kernel.prometheus.upstreamCalls.inc({ opco: 'up', route: 'GET /dossiers/etats', status: '502' });
  await endMinute(clock);
  await eventually(() => store.writes() === 2, 'both instances wrote their minute');
  const docs = await minutes(store);
  t.equal(new Set(docs.map((doc) => doc.instance)).size, 2, 'one document per instance');

  const path = `/admin/history?since=${iso(m0)}&until=${iso(m0 + MINUTE_MS)}`;
  t.equal((await a.get(path, null)).status, 401, 'no key: 401');
  t.equal((await a.get(path, 'b'.repeat(40))).status, 401, 'a wrong key: 401');
  const reply = await a.get(path);
  t.equal(reply.status, 200);
  t.same(validate('admin-history', reply.body), { valid: true }, "the schema's shape");
  t.same(reply.body, {
    since: iso(m0),
    until: iso(m0 + MINUTE_MS),
    stepSeconds: 60,
    times: [iso(m0)],
    series: [
      { name: 'requests', labels: { class: '2xx' }, values: [7] },
      { name: 'upstream', labels: { opcoId: 'up', outcome: '2xx' }, values: [2] },
      { name: 'upstream', labels: { opcoId: 'up', outcome: '5xx' }, values: [1] },
    ],
    limits: [
      { opcoId: 'up', perStep: 100 },
      { opcoId: 'down', perStep: 180 },
    ],
  });
  t.same((await b.get(path)).body, reply.body, 'every instance answers the same');
  const doc = await a.get('/doc', null);
  t.ok(doc.body.paths['/admin/history']?.get, '/doc lists the operation, served by the kernel');
});

t.test('GET /admin/history: 400 VALIDATION_ERROR on what it cannot answer, never a 500', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const r = await start(t, { clock, store, queue });
  const now = clock.now();
  const cases: Array<[string, string, RegExp]> = [
    [`since=${iso(now)}&until=${iso(now - 3_600_000)}`, 'since after until', /since: must be before until/],
    [`since=${iso(now - 3_600_000)}&step=90`, 'a step that is no multiple of 60', /step: must be a multiple of 60/],
    [`since=${iso(now - 7 * DAY_MS + 3_600_000)}&step=60`, 'over 10,000 points', /more than 10000 points/],
    [`since=${iso(now - 8 * DAY_MS)}&step=3600`, 'older than the retention', /older than the history's retention/],
    ['series=requests,bogus', 'an unknown series', /series/],
    ['since=yesterday', 'not a date', /since/],
    ['step=0', 'a step of 0', /step/],
  ];
  for (const [query, what, message] of cases) {
    const reply = await r.get(`/admin/history?${query}`);
    t.equal(reply.status, 400, what);
    t.match(
      reply.body,
      { status: 'error', code: 'VALIDATION_ERROR', errors: [message] },
      `${what}: said in SPEC 7's shape`,
    );
  }
  const day = await r.get(`/admin/history?since=${iso(now - DAY_MS)}&until=${iso(now)}`);
  t.equal(day.body.stepSeconds, 120, 'a day by default: the smallest step of whole minutes within 720 points');
  t.equal(day.body.times.length, 720);
  const hour = await r.get('/admin/history');
  t.equal(hour.status, 200);
  t.equal(hour.body.until, iso(now), 'until: now by default');
  t.equal(hour.body.since, iso(minuteOf(now - 3_600_000)), 'since: an hour before, rounded down to its minute');
  t.equal(hour.body.stepSeconds, 60);
});

t.test(
  'series filter, steps: counts summed over minutes and instances, depths at their highest, null where nobody wrote',
  async (t) => {
    const clock = await minuteClock();
    const { store, queue } = await sharedBackends(t);
    const r = await start(t, { clock, store, queue, history: { enabled: false } });
    const base = minuteOf(clock.now()) - 12 * MINUTE_MS;
    const doc = (minute: number, instance: string, points: HistoryPoint[]): HistoryDoc => {
      const at = base + minute * MINUTE_MS;
      return { _id: `${at}:${instance}`, minute: new Date(at), instance, expiresAt: new Date(at + 7 * DAY_MS), points };
    };
    const requests = (value: number): HistoryPoint => ({ series: 'requests', labels: { class: '2xx' }, value });
    const depth = (value: number): HistoryPoint => ({ series: 'queues', labels: { queue: 'jobs' }, value });
    const upstream: HistoryPoint = { series: 'upstream', labels: { outcome: '2xx', opcoId: 'up' }, value: 1 };
    await new HistoryLog(store, clock).write([
      doc(-1, 'a', [requests(100)]),
      doc(0, 'a', [requests(5), depth(4)]),
      doc(0, 'b', [requests(1), depth(7)]),
      doc(1, 'a', [requests(2), depth(3)]),
      doc(5, 'b', [upstream]),
      doc(6, 'a', [requests(1), depth(9)]),
      doc(6, 'b', [depth(2)]),
      doc(12, 'a', [requests(100)]),
    ]);
    const range = `since=${iso(base + 30_000)}&until=${iso(base + 12 * MINUTE_MS)}`;

    const steps = await r.get(`/admin/history?${range}&step=180&series=requests,queues`);
    t.equal(steps.status, 200);
    t.same(validate('admin-history', steps.body), { valid: true });
    t.same(
      steps.body.times,
      [0, 3, 6, 9].map((m) => iso(base + m * MINUTE_MS)),
      'since rounded down to its minute',
    );
    t.same(steps.body.series, [
      { name: 'requests', labels: { class: '2xx' }, values: [8, 0, 1, null] },
      { name: 'queues', labels: { queue: 'jobs' }, values: [7, 0, 9, null] },
    ]);
    t.same(steps.body.limits, [
      { opcoId: 'up', perStep: 300 },
      { opcoId: 'down', perStep: 540 },
    ]);

    const minutely = await r.get(`/admin/history?${range}`);
    t.equal(minutely.body.stepSeconds, 60);
    const line = (name: string) => minutely.body.series.find((s: { name: string }) => s.name === name).values;
    t.same(line('requests'), [6, 2, null, null, null, 0, 1, null, null, null, null, null]);
    t.same(
      line('queues'),
      [7, 3, null, null, null, 0, 9, null, null, null, null, null],
      'the highest of the instances',
    );
    t.same(
      line('upstream'),
      [0, 0, null, null, null, 1, 0, null, null, null, null, null],
      'every series without a filter',
    );
    t.same(minutely.body.series.find((s: { name: string }) => s.name === 'upstream').labels, {
      opcoId: 'up',
      outcome: '2xx',
    });
  },
);

t.test('a range of more minutes than one read holds is read whole', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const r = await start(t, { clock, store, queue, history: { enabled: false } });
  const base = minuteOf(clock.now()) - 500 * MINUTE_MS;
  const docs: HistoryDoc[] = [];
  for (let m = 0; m < 500; m++) {
    for (const instance of ['a', 'b', 'c']) {
      const at = base + m * MINUTE_MS;
      const points: HistoryPoint[] = [{ series: 'budget', labels: { opcoId: 'up' }, value: 1 }];
      docs.push({ _id: `${at}:${instance}`, minute: new Date(at), instance, expiresAt: new Date(at + DAY_MS), points });
    }
  }
  await new HistoryLog(store, clock).write(docs);
  const reply = await r.get(`/admin/history?since=${iso(base)}&until=${iso(base + 500 * MINUTE_MS)}&step=30000`);
  t.same(reply.body.series, [{ name: 'budget', labels: { opcoId: 'up' }, values: [1500] }], '1,500 minutes, 2 pages');
});

t.test('a restart keeps the history: the minute in progress is written at close', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'opco-history-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const clock = await minuteClock();
  const m0 = minuteOf(clock.now());
  const before = await start(t, { clock, dataDir });
  before.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 3);
  before.kernel.prometheus.budgetCalls.inc({ opco: 'down', tenant: 'proven' }, 2);
  await before.kernel.close({ graceMs: 500 });

  const after = await start(t, { clock, dataDir });
  const kept = await minutes(after.kernel.store);
  t.equal(kept.length, 1, 'the minute in progress, written at close');
  t.equal(kept[0].minute.getTime(), m0);
  after.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 2);
  await endMinute(clock);
  await eventually(async () => (await minutes(after.kernel.store)).length === 2, "the new instance's minute");
  const reply = await after.get(`/admin/history?since=${iso(m0)}&until=${iso(m0 + MINUTE_MS)}`);
  t.same(reply.body.series, [
    { name: 'requests', labels: { class: '2xx' }, values: [5] },
    { name: 'budget', labels: { opcoId: 'down' }, values: [2] },
  ]);
});

t.test('minutes past history.retentionDays are purged by the hourly task', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const r = await start(t, { clock, store, queue, history: { retentionDays: 1 } });
  const count = (n: number) => r.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, n);
  count(1);
  await endMinute(clock);
  await eventually(() => store.writes() === 1, 'the first minute');
  await clock.advance(12 * 3_600_000);
  count(2);
  await endMinute(clock);
  await eventually(() => store.writes() === 2, 'a minute 12 hours later');
  const [old, recent] = await minutes(store);
  t.equal(old.expiresAt.getTime(), old.minute.getTime() + DAY_MS);
  await clock.advance(12 * 3_600_000);
  await eventually(async () => (await minutes(store)).length === 1, 'the first minute purged');
  t.same(
    (await minutes(store)).map((doc) => doc._id),
    [recent._id],
    'the minute still within its retention is kept',
  );
  t.ok(store.calls.includes('sweepExpired'), 'deleted by their expiresAt');
  const reply = await r.get(`/admin/history?since=${iso(clock.now() - DAY_MS - 3_600_000 - MINUTE_MS)}`);
  t.equal(reply.status, 400, 'a range older than the retention (and the purge interval) is refused');
  const edge = await r.get(`/admin/history?since=${iso(clock.now() - DAY_MS - MINUTE_MS)}`);
  t.equal(edge.status, 200, 'the whole retention asked a moment ago is answered');
});

t.test('a minute the store refuses is written with the next one, in one write', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const r = await start(t, { clock, store, queue });
  const m0 = minuteOf(clock.now());
  store.refuseWrites = 1;
  r.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 1);
  await endMinute(clock);
  await eventually(() => store.writes() === 1, 'the refused write');
  r.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '500' }, 1);
  await endMinute(clock);
  await eventually(() => store.writes() === 2, 'the next write');
  const docs = await minutes(store);
  t.same(
    docs.map((doc) => [doc.minute.getTime() - m0, doc.points]),
    [
      [0, [{ series: 'requests', labels: { class: '2xx' }, value: 1 }]],
      [MINUTE_MS, [{ series: 'requests', labels: { class: '5xx' }, value: 1 }]],
    ],
    'each minute in its own document',
  );
});

t.test('history.enabled false: nothing is recorded; the retention is 1 to 90 days, 7 by default', async (t) => {
  const clock = await minuteClock();
  const { store, queue } = await sharedBackends(t);
  const r = await start(t, { clock, store, queue, history: { enabled: false } });
  t.same(r.kernel.config.history, { enabled: false, retentionDays: 7 });
  r.kernel.prometheus.httpRequests.inc({ route: '/x', method: 'GET', status: '200' }, 1);
  await endMinute(clock);
  await r.kernel.close({ graceMs: 500 });
  t.equal(store.writes(), 0, 'no write, at the minute or at close');
  const config = (history: unknown) => () => resolveConfig({ plugins: [], history }, ENV);
  t.throws(config({ retentionDays: 91 }), ConfigError);
  t.throws(config({ retentionDays: 0 }), ConfigError);
  t.same(config(undefined)().history, { enabled: true, retentionDays: 7 });
});
