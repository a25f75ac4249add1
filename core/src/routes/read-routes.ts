/**
 * The synchronous GET operations (SPEC 1 rule 2, 4.3-4.7, 4.10): the operation router has
 * validated the query; the pipeline does the rest. A read the cache holds in memory is answered
 * by a shortcut, at once, before its handler (http/operation-router.ts). GET /{opcoId}/status turns the pipeline's
 * outcome into a health verdict (D13).
 */
import { operations, type OperationId } from '@opco-proxy/schemas';
import type { ServiceError } from '../errors/errors.js';
import { callVerdict } from '../pipeline/call-verdict.js';
import type { RouteKey } from '../profile/profile.js';
import type { OpcoDirectory } from '../profile/opco-directory.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { MetricsWindow } from '../observability/metrics.js';
import type { Clock } from '../clock.js';
import { RawJson, type OperationRouter } from '../http/operation-router.js';

const READS = [
  'getCfaKeyInfo',
  'getDossier',
  'listDossierEtats',
  'listDossiers',
  'listFactureEtats',
] as const satisfies readonly OperationId[];

export interface ReadRouteDeps {
  opcos: OpcoDirectory;
  pipeline: Pipeline;
  window: MetricsWindow;
  clock: Clock;
  startedAt: number;
}

export function mountReadRoutes(router: OperationRouter, deps: ReadRouteDeps): void {
  for (const id of READS) {
    const route = operations[id].profileRoute as RouteKey;
    router.mount(
      id,
      async ({ params, query, tenant, requestId, traceparent }) => {
        const call = deps.opcos.context(params.opcoId, route, tenant, {
          query: query as Record<string, string>,
          synchronous: true,
          requestId,
          traceparent,
        });
        const answer = await deps.pipeline.serve(call);
        const headers: Record<string, string> =
          call.cache === 'none' ? {} : { 'X-Cache': call.cache === 'hit' ? 'HIT' : 'MISS' };
        return {
          status: 200,
          body: (answer.json !== undefined ? new RawJson(answer.json) : answer.body) as never,
          headers,
        };
      },
      'kernel',
    );
    // A read whose answer is in this process's memory is answered before the middleware chain.
    router.mountShortcut(
      id,
      ({ params, query, tenant, requestId, traceparent }) => {
        const call = deps.opcos.context(params.opcoId, route, tenant, {
          query: query as Record<string, string>,
          synchronous: true,
          requestId,
          traceparent,
        });
        const json = deps.pipeline.peek(call);
        return json === undefined ? undefined : { status: 200, body: new RawJson(json), headers: { 'X-Cache': 'HIT' } };
      },
      'kernel',
    );
  }
  router.mount(
    'getOpcoStatus',
    async ({ params, tenant, requestId, traceparent }) => {
      const call = deps.opcos.context(params.opcoId, 'GET /status', tenant, {
        synchronous: true,
        requestId,
        traceparent,
      });
      const { profile } = call.opco;
      let upstream: unknown;
      let failure: ServiceError | undefined;
      try {
        upstream = await deps.pipeline.run(call);
      } catch (err) {
        failure = err as ServiceError;
        // SPEC 4.3: a key the upstream refuses is 403, as on every other route, not a verdict.
        if (failure.code === 'HTTP_ERROR') throw failure;
      }
      const window = deps.window.snapshot(call.opco.id);
      return {
        status: 200,
        body: {
          status: healthVerdict(failure, window.errorRate, window.rateLimited),
          supportedVersions: upstreamVersions(upstream) ?? profile.versions,
          uptime: Math.round((deps.clock.now() - deps.startedAt) / 1000),
        },
      };
    },
    'kernel',
  );
}

/**
 * D13: unreachable or 5xx is unhealthy; errors >= 5% or any 429 in the window is degraded. A
 * status call answered with a complaint about the request (call-verdict.ts) is the upstream
 * working: the window decides.
 */
function healthVerdict(
  failure: ServiceError | undefined,
  errorRate: number,
  rateLimited: number,
): 'healthy' | 'degraded' | 'unhealthy' {
  const verdict = failure ? callVerdict(failure) : 'answered';
  if (verdict === 'rate-limited') return 'degraded';
  if (verdict === 'failure')
    return failure!.status >= 500 ||
      failure!.status === 0 ||
      ['TIMEOUT', 'NETWORK_ERROR', 'UPSTREAM_INVALID_RESPONSE'].includes(failure!.code)
      ? 'unhealthy'
      : 'degraded';
  return errorRate >= 0.05 || rateLimited > 0 ? 'degraded' : 'healthy';
}

function upstreamVersions(body: unknown): string[] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const versions = record.supportedVersions ?? record.versions;
  return Array.isArray(versions) && versions.every((v) => typeof v === 'string') ? versions : undefined;
}
