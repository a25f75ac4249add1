/**
 * Opt-in OpenTelemetry tracing (`plugins: [..., "otel"]`, off by default): one CLIENT span per
 * upstream call, from the beforeCall hook (the call then waits for budget, step 4, and goes out)
 * to afterCall, a child of the caller's W3C `traceparent` when the request (or the job's
 * submission) sent one. The span's context goes upstream as `traceparent`/`tracestate`, so the
 * OPCO's traces join the client's. Spans are exported over OTLP/HTTP, batched.
 *
 * Only upstream calls are traced: they are what costs time and budget; inbound requests are
 * covered by the request id and the access log. A call refused at admission (429) ends no span.
 */
import { definePlugin, SERVICE_VERSION as VERSION, type CallContext, type PluginApi } from '@opco-proxy/core';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { OtelConfig } from './generated/config.js';

export type { OtelConfig };

const propagator = new W3CTraceContextPropagator();

export async function registerOtel(api: PluginApi<OtelConfig>): Promise<void> {
  const { config } = api;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName ?? 'opco-proxy',
      'service.version': VERSION,
      'process.role': api.role,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio ?? 1) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ ...(config.endpoint && { url: config.endpoint }), headers: config.headers }),
        scheduledDelayMillis: config.exportDelayMs ?? 5000,
      }),
    ],
  });
  const tracer = provider.getTracer('opco-proxy', VERSION);
  const spans = new WeakMap<CallContext, Span>();

  api.addHook('beforeCall', (ctx) => {
    const span = startCallSpan(tracer, ctx);
    spans.set(ctx, span);
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    Object.assign(ctx.upstreamHeaders, carrier);
  });
  api.addHook('afterCall', (ctx) => {
    const span = spans.get(ctx);
    if (!span) return;
    endCallSpan(span, ctx);
    spans.delete(ctx);
  });
  // Spans of the last seconds are exported before the process exits.
  api.addHook('close', () => provider.shutdown());
}

function startCallSpan(tracer: Tracer, ctx: CallContext): Span {
  const parent = ctx.traceparent
    ? propagator.extract(ROOT_CONTEXT, { traceparent: ctx.traceparent }, defaultTextMapGetter)
    : ROOT_CONTEXT;
  return tracer.startSpan(
    `${ctx.route}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': ctx.method,
        'opco.id': ctx.opco.id,
        'opco.route': ctx.route,
        'opco.priority': ctx.priority,
        ...(ctx.requestId && { 'opco.request_id': ctx.requestId }),
      },
    },
    parent,
  );
}

function endCallSpan(span: Span, ctx: CallContext): void {
  const status = ctx.error ? ctx.error.status : ctx.response?.status;
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (ctx.error) {
    span.setAttribute('error.type', ctx.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: ctx.error.message });
  }
  span.end();
}

export default definePlugin({ name: 'otel', register: registerOtel });
