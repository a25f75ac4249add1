// System routes (SPEC 4.1, 4.2, /ready, /metrics), interface version (D27), tenant rate (D6),
// allow-list (D8).
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { contractOf } from '../src/contract.js';
import { startService, KEY_A, KEY_B } from '../src/index.js';

const SPEC_ROUTES = [
  'get /health',
  'get /doc',
  'get /{opcoId}/status',
  'get /{opcoId}/cfakeyinfo',
  'get /{opcoId}/dossiers',
  'get /{opcoId}/dossiers/etats',
  'get /{opcoId}/dossiers/liste',
  'post /{opcoId}/dossiers',
  'post /{opcoId}/factures',
  'get /{opcoId}/factures/etats',
  'post /{opcoId}/conventions',
  'post /{opcoId}/certificats',
  'post /{opcoId}/documents',
  'get /{opcoId}/jobs/{jobId}',
  'post /sync/dossiers',
  'get /sync/{syncId}',
  'delete /sync/{syncId}',
  'post /webhooks',
  'get /webhooks',
  'patch /webhooks/{id}',
  'delete /webhooks/{id}',
  'get /webhooks/{id}/logs',
];

const service = await startService({ config: { tenantRateLimit: { perSecond: 2, burst: 3 } } });
t.teardown(() => service.close());

t.test('GET /health needs no key', async (t) => {
  const reply = await service.get('/health', { key: null });
  t.equal(reply.status, 200);
  t.same(reply.body, { status: 'ok' });
  t.equal(reply.headers.get('svc-api-version'), '1');
});

/** What /doc says GET /ready answers with `status`: its schema compiled, and the fields it declares. */
async function documentedReady(url: string, status: 200 | 503) {
  const doc = (await (await fetch(`${url}/doc`)).json()) as any;
  const componentOf = (ref: string) => ref.split('/').pop()!;
  let response = doc.paths['/ready'].get.responses[status];
  if (response.$ref) response = doc.components.responses[componentOf(response.$ref)];
  const schema = doc.components.schemas[componentOf(response.content['application/json'].schema.$ref)];
  const contract = contractOf(doc);
  const validate = contract.operations.find((o) => o.id === 'getReady')!.responses[status].schema!;
  return {
    check: (body: unknown) => (validate(body) ? '' : contract.ajv.errorsText(validate.errors)),
    declared: Object.keys(schema.properties ?? {}),
    required: (schema.required ?? []) as string[],
  };
}

t.test(
  'GET /ready reports the store and the queue reachable, every field of its answer as /doc declares it',
  async (t) => {
    const reply = await service.get('/ready', { key: null });
    t.equal(reply.status, 200);
    t.same(reply.body, { status: 'ready', store: 'embedded', queue: 'embedded' });
    const documented = await documentedReady(service.url, 200);
    t.equal(documented.check(reply.body), '', 'valid against /doc');
    // A field the schema does not name would pass a schema open to more: each one is looked for.
    for (const field of Object.keys(reply.body)) t.ok(documented.declared.includes(field), `${field} declared in /doc`);
    for (const field of documented.required) t.ok(field in reply.body, `${field}, required by /doc, answered`);
  },
);

t.test('GET /doc is an OpenAPI 3.0 document listing every route of SPEC 4', async (t) => {
  const reply = await service.get('/doc', { key: null });
  t.equal(reply.status, 200);
  t.match(reply.body.openapi, /^3\.0\./);
  const listed = new Set<string>();
  for (const [path, item] of Object.entries(reply.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) listed.add(`${method} ${path}`);
  }
  for (const route of SPEC_ROUTES) t.ok(listed.has(route), route);
});

t.test('GET /metrics exposes Prometheus text', async (t) => {
  await service.get('/sandbox/dossiers/etats?numeroPage=1', { key: KEY_B });
  const reply = await service.get('/metrics', { key: null });
  t.equal(reply.status, 200);
  t.match(
    reply.text,
    /opco_proxy_upstream_calls_total\{opco="sandbox",route="GET \/dossiers\/etats",status="200"\} \d+/,
  );
  await service.get('/sandbox/jobs/not-a-job', { key: KEY_B });
  const after = (await service.get('/metrics', { key: null })).text;
  // Inbound requests by route template (never the raw path), method and status, and their latency.
  t.match(
    after,
    /opco_proxy_http_requests_total\{route="\/\{opcoId\}\/dossiers\/etats",method="GET",status="200"\} [1-9]/,
  );
  t.match(
    after,
    /opco_proxy_http_requests_total\{route="\/\{opcoId\}\/jobs\/\{jobId\}",method="GET",status="404"\} [1-9]/,
  );
  t.notMatch(after, /not-a-job/, 'ids do not become labels');
  t.match(
    after,
    /opco_proxy_http_request_duration_seconds_bucket\{le="[^"]+",route="\/\{opcoId\}\/dossiers\/etats",method="GET"\} [1-9]/,
  );
  // Process and event-loop figures.
  t.match(after, /^opco_proxy_process_cpu_user_seconds_total \d/m);
  t.match(after, /^opco_proxy_nodejs_eventloop_lag_seconds \d/m);
  t.match(after, /^opco_proxy_process_resident_memory_bytes \d/m);
});

t.test('a tenant over its own request rate gets 429; others are unaffected (D6)', async (t) => {
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await service.get('/sandbox/status', { key: 'noisy-tenant-key' })).status);
  t.ok(
    statuses.slice(0, 3).every((s) => s === 200),
    'burst admitted',
  );
  t.ok(statuses.includes(429), 'then limited');
  const limited = await service.get('/sandbox/status', { key: 'noisy-tenant-key' });
  t.equal(limited.body.code, 'RATE_LIMITED');
  t.ok(Number(limited.headers.get('retry-after')) >= 1);
  t.equal((await service.get('/sandbox/status', { key: KEY_A })).status, 200, 'another tenant still served');
  t.equal((await service.get('/health', { key: 'noisy-tenant-key' })).status, 200, '/health exempt');
});

t.test('an allow-list of tenant hashes restricts the service (D8)', async (t) => {
  const restricted = await startService({ config: { allowedTenants: [tenantHash(KEY_A)] } });
  t.teardown(() => restricted.close());
  t.equal((await restricted.get('/sandbox/status', { key: KEY_A })).status, 200);
  const refused = await restricted.get('/sandbox/status', { key: KEY_B });
  t.equal(refused.status, 403);
  t.equal(refused.body.code, 'HTTP_ERROR');
});

t.test('/ready answers 503 UNAVAILABLE when the store is gone', async (t) => {
  const broken = await startService();
  t.teardown(() => broken.close().catch(() => {}));
  await broken.kernel.store.close();
  const reply = await broken.get('/ready', { key: null });
  t.equal(reply.status, 503, reply.text);
  t.equal(reply.body.code, 'UNAVAILABLE');
  t.ok(Number(reply.headers.get('retry-after')) >= 1, 'with Retry-After');
  const documented = await documentedReady(broken.url, 503);
  t.equal(documented.check(reply.body), '', 'the 503 /doc documents');
  for (const field of Object.keys(reply.body)) t.ok(documented.declared.includes(field), `${field} declared in /doc`);
});
