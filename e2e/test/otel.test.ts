// The opt-in "otel" plugin: a client's W3C traceparent becomes the parent of one CLIENT span per
// upstream call, for a read and for each step of a job the request submitted; the span's own
// context goes upstream as `traceparent`; spans reach a real OTLP/HTTP receiver. Without the
// plugin no trace header goes upstream.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { DEFAULT_PLUGINS } from '@opco-proxy/server';
import { dossierBody, eventually, startReceiver, startService, waitForJob } from '../src/index.js';

const collector = await startReceiver({ status: 200 });
const traced = await startService({
  config: {
    plugins: [...DEFAULT_PLUGINS, 'otel'],
    otel: { endpoint: `${collector.url}/v1/traces`, exportDelayMs: 50, serviceName: 'opco-proxy-test' },
  },
});
t.teardown(async () => {
  await traced.close();
  await collector.close();
});

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}
function exportedSpans(): ExportedSpan[] {
  return collector.received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => r.body?.resourceSpans ?? [])
    .flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans));
}
const attribute = (span: ExportedSpan, key: string) =>
  Object.values(span.attributes.find((a) => a.key === key)?.value ?? {})[0];
const newTraceparent = () => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') });

t.test('a read: the upstream gets a child of the client span, and the span is exported', async (t) => {
  const client = newTraceparent();
  const reply = await traced.get('/sandbox/dossiers/liste?numerosInternes=DOS-2019-000003', {
    headers: { traceparent: `00-${client.traceId}-${client.spanId}-01`, 'x-request-id': 'otel-read-1' },
  });
  t.equal(reply.status, 200, reply.text);
  const wire = traced.sandbox.received.find((r) => r.headers['x-request-id'] === 'otel-read-1')!;
  const [version, traceId, parentId, flags] = String(wire.headers.traceparent).split('-');
  t.equal(version, '00');
  t.equal(traceId, client.traceId, 'the upstream call is in the client trace');
  t.not(parentId, client.spanId, 'with the id of the gateway span, not the client one');
  t.equal(flags, '01', 'sampled, as the client asked');
  const span = await eventually(
    () => exportedSpans().find((s) => s.traceId === client.traceId),
    'the read span exported',
  );
  t.equal(span.spanId, parentId, 'the exported span is the one the upstream saw');
  t.equal(span.parentSpanId, client.spanId, 'its parent is the client span');
  t.equal(span.name, 'GET /dossiers/liste');
  t.equal(span.kind, 3, 'SPAN_KIND_CLIENT');
  t.equal(attribute(span, 'opco.id'), 'sandbox');
  t.equal(attribute(span, 'opco.request_id'), 'otel-read-1');
  t.equal(attribute(span, 'http.response.status_code'), 200);
});

t.test('a job: the step sent by the worker carries the trace of the submission', async (t) => {
  const client = newTraceparent();
  const body = dossierBody();
  const reply = await traced.request('POST', '/sandbox/dossiers', {
    body,
    headers: { traceparent: `00-${client.traceId}-${client.spanId}-01` },
  });
  t.equal(reply.status, 202, reply.text);
  t.equal((await waitForJob(traced, reply.body.statusUrl)).status, 'completed');
  const wire = traced.sandbox.received.find((r) => (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne)!;
  t.equal(String(wire.headers.traceparent).split('-')[1], client.traceId, 'the worker call joined the client trace');
  const span = await eventually(
    () => exportedSpans().find((s) => s.traceId === client.traceId),
    'the job step span exported',
  );
  t.equal(span.parentSpanId, client.spanId);
  t.equal(span.name, 'POST /dossiers');
});

t.test('a malformed traceparent is ignored: a new trace is started, the request is served', async (t) => {
  const reply = await traced.get('/sandbox/dossiers/liste?numerosInternes=DOS-2019-000004', {
    headers: { traceparent: 'zz-not-a-trace', 'x-request-id': 'otel-bad-1' },
  });
  t.equal(reply.status, 200, reply.text);
  const wire = traced.sandbox.received.find((r) => r.headers['x-request-id'] === 'otel-bad-1')!;
  t.match(String(wire.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, 'a root span of the gateway');
  t.equal(
    collector.received.every((r) => r.headers['content-type']?.startsWith('application/json')),
    true,
    'OTLP/HTTP JSON',
  );
});

t.test('without the plugin, no trace header goes upstream', async (t) => {
  const plain = await startService({});
  t.teardown(() => plain.close());
  const client = newTraceparent();
  const reply = await plain.get('/sandbox/dossiers/liste?numerosInternes=DOS-2019-000005', {
    headers: { traceparent: `00-${client.traceId}-${client.spanId}-01`, 'x-request-id': 'otel-off-1' },
  });
  t.equal(reply.status, 200, reply.text);
  const wire = plain.sandbox.received.find((r) => r.headers['x-request-id'] === 'otel-off-1')!;
  t.equal(wire.headers.traceparent, undefined);
});
