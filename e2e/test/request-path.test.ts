// One request path (issue 29): a read whose URL was routed before is served by the early path,
// and so is a submission (issue 40),
// before Koa builds a context, and by the same functions as the middleware chain: the answer
// headers, the caller's admission, the access line, the request metrics, the audit record of a
// personal read and the rendering of a refusal. Which path took a request is seen by counting
// the contexts Koa creates (one per request the chain takes, none for the early path).
import t, { type Test } from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import cache from '@opco-proxy/plugin-cache';
import {
  dossierBody,
  isErrorBody,
  startService,
  KEY_A,
  KEY_B,
  type Reply,
  type RequestOptions,
  type Service,
} from '../src/index.js';

const PATH = '/sandbox/dossiers/etats?numeroPage=1';
const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

async function service(
  t: { teardown(fn: () => unknown): void },
  config: Record<string, unknown> = {},
): Promise<{ service: Service; chained: () => number; logs: string[] }> {
  const logs: string[] = [];
  const service = await startService({
    clock: new TestClock({ frozen: true }),
    logs,
    config: { ...config, plugins: [] },
    opco: { cacheTtlS: { 'GET /dossiers/etats': 60, 'GET /dossiers': 60 } },
    plugins: [cache],
  });
  t.teardown(() => service.close());
  const { app } = service.kernel;
  let contexts = 0;
  const createContext = app.createContext.bind(app);
  app.createContext = (req, res) => ((contexts += 1), createContext(req, res));
  return { service, chained: () => contexts, logs };
}

/** The header names of a reply but those whose value is the moment's (Date) or the request's own. */
function headerNames(reply: Reply): string[] {
  return [...reply.headers.keys()].filter((name) => name !== 'date').sort();
}

function lineOf(logs: string[], requestId: string): Record<string, unknown> {
  return logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
}

t.test('a cached and an uncached read carry the same headers, log fields and metrics', async (t) => {
  const { service: s, chained, logs } = await service(t);
  const miss = await s.get(PATH, { headers: { 'x-request-id': 'by-chain', traceparent: TRACE } });
  t.equal(chained(), 1, 'the first read of a URL takes the chain');
  const hit = await s.get(PATH, { headers: { 'x-request-id': 'early', traceparent: TRACE } });
  t.equal(chained(), 1, 'the second one does not');
  t.equal(miss.headers.get('x-cache'), 'MISS');
  t.equal(hit.headers.get('x-cache'), 'HIT');
  t.same(headerNames(hit), headerNames(miss), 'the same headers');
  for (const name of ['svc-api-version', 'content-type', 'content-length', 'connection', 'keep-alive'])
    t.equal(hit.headers.get(name), miss.headers.get(name), name);
  t.equal(miss.headers.get('x-request-id'), 'by-chain');
  t.equal(hit.headers.get('x-request-id'), 'early');
  t.equal(hit.text, miss.text);

  const chainLine = lineOf(logs, 'by-chain');
  const earlyLine = lineOf(logs, 'early');
  t.same(Object.keys(earlyLine).sort(), Object.keys(chainLine).sort(), 'the same log fields');
  for (const field of ['method', 'route', 'operationId', 'status', 'apiKey', 'level', 'msg'])
    t.equal(earlyLine[field], chainLine[field], field);
  t.equal(earlyLine.apiKey, `${KEY_A.slice(0, 4)}****`);

  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  t.match(
    metrics,
    /opco_proxy_http_requests_total\{route="\/\{opcoId\}\/dossiers\/etats",method="GET",status="200"\} 2\n/,
    'both counted under one route',
  );
  t.match(
    metrics,
    /opco_proxy_http_request_duration_seconds_count\{route="\/\{opcoId\}\/dossiers\/etats",method="GET"\} 2\n/,
    'both timed',
  );
});

/** Two refusals of one kind, the first on a URL the early path serves, the second on one it never saw. */
async function refusedBothWays(
  t: Test,
  s: Service,
  chained: () => number,
  key: string | null,
  status: number,
  code: string,
): Promise<void> {
  const before = chained();
  const early = await s.get(PATH, { key, headers: { 'x-request-id': `early-${status}` } });
  t.equal(chained(), before, 'the known URL is refused on the early path');
  const byChain = await s.get('/sandbox/dossiers/etats?numeroPage=9', {
    key,
    headers: { 'x-request-id': `chain-${status}` },
  });
  t.equal(chained(), before + 1, 'the new one on the chain');
  isErrorBody(t, early, status, code);
  isErrorBody(t, byChain, status, code);
  t.same(early.body, byChain.body, 'the same body');
  t.same(headerNames(early), headerNames(byChain), 'the same headers');
  t.equal(early.headers.get('retry-after'), byChain.headers.get('retry-after'));
}

t.test('a refusal reads the same on either path', async (t) => {
  const {
    service: s,
    chained,
    logs,
  } = await service(t, { allowedTenants: [tenantHash(KEY_A)], tenantRateLimit: { perSecond: 0.001, burst: 2 } });
  t.equal((await s.get(PATH)).status, 200);
  t.equal((await s.get(PATH)).headers.get('x-cache'), 'HIT');
  await refusedBothWays(t, s, chained, KEY_B, 403, 'HTTP_ERROR');
  await refusedBothWays(t, s, chained, null, 403, 'HTTP_ERROR');
  await refusedBothWays(t, s, chained, KEY_A, 429, 'RATE_LIMITED');
  t.same(Object.keys(lineOf(logs, 'early-429')).sort(), Object.keys(lineOf(logs, 'chain-429')).sort(), 'logged alike');
  t.equal(lineOf(logs, 'early-429').status, 429);
});

t.test('a cached personal read is recorded in the audit trail on the early path', async (t) => {
  const { service: s, chained } = await service(t, { audit: { reads: true } });
  const numero = s.sandbox.dataset.dossiers[1].numeroInterne;
  const read = `/sandbox/dossiers?numeroInterne=${numero}`;
  t.equal((await s.get(read)).headers.get('x-cache'), 'MISS');
  const before = chained();
  const hit = await s.get(read, { headers: { 'x-request-id': 'audited-hit' } });
  t.equal(hit.headers.get('x-cache'), 'HIT');
  t.equal(chained(), before, 'answered on the early path');
  const items = (await s.get('/audit')).body.items as Array<{ action: string; requestId: string }>;
  t.same(
    items.map((r) => r.action),
    ['getDossier', 'getDossier'],
    'both reads recorded',
  );
  t.ok(
    items.some((r) => r.requestId === 'audited-hit'),
    'the early one with its request id',
  );
});

/** A POST on the known URL (the early path) and on a new one (the chain: a query string it ignores). */
async function postedBothWays(
  t: Test,
  s: Service,
  chained: () => number,
  options: RequestOptions,
  fresh: number,
): Promise<[Reply, Reply]> {
  const before = chained();
  const early = await s.request('POST', '/sandbox/dossiers', {
    ...options,
    headers: { ...options.headers, 'x-request-id': `early-post-${fresh}` },
  });
  t.equal(chained(), before, 'the known URL is answered on the early path');
  const byChain = await s.request('POST', `/sandbox/dossiers?fresh=${fresh}`, {
    ...options,
    headers: { ...options.headers, 'x-request-id': `chain-post-${fresh}` },
  });
  t.equal(chained(), before + 1, 'the new one on the chain');
  t.equal(early.status, byChain.status, 'the same status');
  t.same(headerNames(early), headerNames(byChain), 'the same headers');
  for (const name of ['svc-api-version', 'content-type', 'connection'])
    t.equal(early.headers.get(name), byChain.headers.get(name), name);
  return [early, byChain];
}

t.test('a submission to a URL posted before is served on the early path, as the chain serves it', async (t) => {
  const logs: string[] = [];
  const s = await startService({
    clock: new TestClock({ frozen: true }),
    logs,
    role: 'api',
    config: { limits: { bodyBytes: 4096 } },
  });
  t.teardown(() => s.close());
  const { app } = s.kernel;
  let contexts = 0;
  const createContext = app.createContext.bind(app);
  app.createContext = (req, res) => ((contexts += 1), createContext(req, res));
  const chained = () => contexts;

  t.equal(
    (await s.request('POST', '/sandbox/dossiers', { body: dossierBody() })).status,
    202,
    'the first POST takes the chain',
  );
  t.equal(chained(), 1);

  const [accepted, acceptedByChain] = await postedBothWays(t, s, chained, { body: dossierBody() }, 1);
  t.equal(accepted.status, 202);
  t.not(accepted.body.jobId, acceptedByChain.body.jobId, 'two jobs');
  const poll = `/sandbox/jobs/${accepted.body.jobId as string}`;
  const job = await s.get(poll, { headers: { 'x-request-id': 'poll-chain' } });
  t.equal(job.body.status, 'pending', 'the early one is stored');
  const polled = chained();
  const again = await s.get(poll, { headers: { 'x-request-id': 'poll-early' } });
  t.equal(chained(), polled, 'a job polled again is answered on the early path');
  t.same(again.body, job.body);
  t.same(headerNames(again), headerNames(job), 'with the same headers');
  t.equal(
    (await s.get(`/sandbox/jobs/${acceptedByChain.body.jobId as string}`, { key: KEY_B })).status,
    404,
    "another tenant's poll of it: 404",
  );
  t.equal(
    (await s.get(`/sandbox/jobs/${acceptedByChain.body.jobId as string}`, { key: KEY_B })).status,
    404,
    'on the early path too',
  );
  await s.request('GET', '/docs', { key: null, headers: { accept: 'text/html' } });
  const documented = chained();
  await s.request('GET', '/docs', { key: null, headers: { accept: 'text/html' } });
  t.equal(chained(), documented + 1, 'a page that is not JSON always takes the chain');
  const earlyLine = lineOf(logs, 'early-post-1');
  const chainLine = lineOf(logs, 'chain-post-1');
  t.same(Object.keys(earlyLine).sort(), Object.keys(chainLine).sort(), 'the same log fields');
  for (const field of ['method', 'route', 'operationId', 'status', 'apiKey'])
    t.equal(earlyLine[field], chainLine[field], field);
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  t.match(
    metrics,
    /opco_proxy_http_requests_total\{route="\/\{opcoId\}\/dossiers",method="POST",status="202"\} 3\n/,
    'all counted under one route',
  );

  const [invalid, invalidByChain] = await postedBothWays(t, s, chained, { body: { cerfa: 'no' } }, 2);
  isErrorBody(t, invalid, 400, 'VALIDATION_ERROR');
  t.same(invalid.body, invalidByChain.body, 'the same refusal');

  const [wrongType] = await postedBothWays(
    t,
    s,
    chained,
    { rawBody: JSON.stringify(dossierBody()), headers: { 'content-type': 'text/plain' } },
    3,
  );
  isErrorBody(t, wrongType, 415, 'UNSUPPORTED_MEDIA_TYPE');

  const [tooLarge] = await postedBothWays(t, s, chained, { body: dossierBody({ padding: 'x'.repeat(5000) }) }, 4);
  isErrorBody(t, tooLarge, 413, 'PAYLOAD_TOO_LARGE');
  t.equal(tooLarge.headers.get('connection'), 'close', 'a body left unread closes the connection');

  const body = dossierBody();
  const first = await s.request('POST', '/sandbox/dossiers', { body, headers: { 'idempotency-key': 'early-key' } });
  t.equal(first.status, 202);
  const duplicate = await s.request('POST', '/sandbox/dossiers', { body, headers: { 'idempotency-key': 'early-key' } });
  t.equal(duplicate.status, 200, 'a duplicate on the early path');
  t.same([duplicate.body.status, duplicate.body.jobId], ['duplicate', first.body.jobId]);
});
