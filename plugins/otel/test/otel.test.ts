// The otel plugin on a real kernel: one CLIENT span per upstream call with the call's attributes,
// a child of the caller's traceparent whose own context goes upstream, errors marked, no span for
// a call admission refused, and the sampler following the caller's flag and the configured ratio.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { PRIORITY, SERVICE_VERSION } from '@opco-proxy/core';
import { startOtelKernel } from './fixtures/otel-kernel.js';

const ETATS = 'GET /dossiers/etats';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** A client's trace: its ids and the traceparent header it would send. */
function clientTrace(flags = '01'): { traceId: string; spanId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-${flags}` };
}

/** Trace id, span id and flags of the traceparent the upstream received with its n-th request. */
function sentUpstream(received: Array<{ headers: Record<string, unknown> }>, n: number): string[] {
  const match = TRACEPARENT.exec(String(received[n].headers.traceparent));
  if (!match) throw new Error(`no well-formed traceparent upstream: ${String(received[n].headers.traceparent)}`);
  return match.slice(1);
}

t.test("a call in a client's trace: one CLIENT span, child of the client's, its context sent upstream", async (t) => {
  const rig = await startOtelKernel(t, { serviceName: 'otel-unit', headers: { 'x-collector-token': 'secret-1' } });
  const client = clientTrace();
  t.same(await rig.call(ETATS, { query: { numeroPage: '1' }, traceparent: client.header, requestId: 'req-1' }), {});
  const [traceId, spanId, flags] = sentUpstream(rig.upstream, 0);
  t.same([traceId, flags], [client.traceId, '01'], "the upstream call is in the client's trace, sampled");
  t.not(spanId, client.spanId, "under the gateway's span, not the client's");
  t.equal(rig.upstream[0].headers.tracestate, undefined, 'no tracestate: the client sent none');

  const spans = await rig.exported();
  t.equal(spans.length, 1, 'one span for the one call');
  const [span] = spans;
  t.match(span, { traceId: client.traceId, spanId, parentSpanId: client.spanId, name: ETATS, kind: 3 }, 'CLIENT kind');
  t.same(span.attributes, {
    'http.request.method': 'GET',
    'opco.id': 'up',
    'opco.route': ETATS,
    'opco.priority': PRIORITY.client,
    'opco.request_id': 'req-1',
    'http.response.status_code': 200,
  });
  t.notOk(span.status.code, 'status unset: the call succeeded');
  t.same(span.resource, { 'service.name': 'otel-unit', 'service.version': SERVICE_VERSION, 'process.role': 'serve' });
  t.same(span.scope, { name: 'opco-proxy', version: SERVICE_VERSION });
  t.equal(rig.collector.length, 1, 'exported in one batch, at close');
  t.equal(rig.collector[0].path, '/v1/traces', 'to the configured endpoint');
  const headers = { 'content-type': /^application\/json/, 'x-collector-token': 'secret-1' };
  t.match(rig.collector[0].headers, headers, 'OTLP/HTTP JSON, with the configured headers');
});

t.test('without a well-formed traceparent each call starts its own trace', async (t) => {
  const rig = await startOtelKernel(t);
  await rig.call(ETATS);
  await rig.call(ETATS, { traceparent: 'zz-not-a-trace' });
  await rig.call('POST /dossiers', { body: { numeroExterne: 'X-1' }, priority: PRIORITY.normal });
  const sent = [0, 1, 2].map((n) => sentUpstream(rig.upstream, n));
  const spans = await rig.exported();
  t.equal(spans.length, 3);
  for (const [n, span] of spans.entries()) {
    t.same([span.traceId, span.spanId], sent[n].slice(0, 2), `span ${n} is the one whose context went upstream`);
    t.notOk(span.parentSpanId, `span ${n} is a root`);
    t.equal(span.attributes['opco.request_id'], undefined, 'no request id given, none recorded');
  }
  t.equal(new Set(spans.map((s) => s.traceId)).size, 3, 'three traces');
  t.match(spans[2], {
    name: 'POST /dossiers',
    attributes: { 'http.request.method': 'POST', 'opco.priority': PRIORITY.normal, 'http.response.status_code': 200 },
  });
});

t.test('a call the upstream fails: its span has the status, the error code and the error status', async (t) => {
  const rig = await startOtelKernel(t);
  const { error } = await rig.call('GET /dossiers/liste', { query: { numerosInternes: 'D-1' } });
  t.match(error, { code: 'UPSTREAM_ERROR', status: 503, message: 'upstream answered 503' }, 'as the client sees it');
  const [span] = await rig.exported();
  t.same(
    [span.attributes['http.response.status_code'], span.attributes['error.type'], span.status],
    [503, 'UPSTREAM_ERROR', { code: 2, message: 'upstream answered 503' }],
    'STATUS_CODE_ERROR, with the code and status the client got',
  );
});

t.test('a call refused at admission ends no span; the admitted one does', async (t) => {
  const rig = await startOtelKernel(t);
  t.same(await rig.call(ETATS, {}, 'tight'), {}, 'the one call of the window');
  const { error } = await rig.call(ETATS, {}, 'tight');
  t.match(error, { status: 429, code: 'RATE_LIMITED' });
  t.equal(rig.upstream.length, 1, 'the refused call never went upstream');
  const spans = await rig.exported();
  t.same(
    spans.map((s) => [s.spanId, s.attributes['opco.id']]),
    [[sentUpstream(rig.upstream, 0)[1], 'tight']],
  );
});

t.test("a client's unsampled trace is followed: its context goes upstream, nothing is exported", async (t) => {
  const rig = await startOtelKernel(t);
  const client = clientTrace('00');
  await rig.call(ETATS, { traceparent: client.header });
  const [traceId, , flags] = sentUpstream(rig.upstream, 0);
  t.same([traceId, flags], [client.traceId, '00']);
  t.same(await rig.exported(), []);
  t.equal(rig.collector.length, 0, 'no export at all');
});

t.test("sampleRatio 0: new traces are not recorded, a sampled caller's trace still is", async (t) => {
  const rig = await startOtelKernel(t, { sampleRatio: 0 });
  await rig.call(ETATS);
  const client = clientTrace();
  await rig.call(ETATS, { traceparent: client.header });
  t.equal(sentUpstream(rig.upstream, 0)[2], '00', 'a root trace, unsampled, still propagated');
  t.equal(sentUpstream(rig.upstream, 1)[2], '01');
  const spans = await rig.exported();
  t.same(
    spans.map((s) => s.traceId),
    [client.traceId],
    "only the caller's sampled trace",
  );
});
