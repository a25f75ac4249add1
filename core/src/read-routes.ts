/**
 * The synchronous GET routes (SPEC 1 rule 2, 4.3-4.7, 4.10): query validated by the schemas,
 * then the pipeline. GET /{opcoId}/status turns the pipeline's outcome into a health verdict (D13).
 */
import type Router from '@koa/router';
import { validate } from '@opco-proxy/schemas';
import { createError, type ServiceError } from './errors.js';
import type { RouteKey } from './profile.js';
import type { OpcoRegistry } from './opco-registry.js';
import type { Pipeline } from './pipeline.js';
import type { MetricsWindow } from './metrics.js';
import type { State } from './http-middleware.js';

interface ReadRoute {
  route: RouteKey;
  path: string;
  querySchema?: string;
}

export const READ_ROUTES: ReadRoute[] = [
  { route: 'GET /cfakeyinfo', path: '/:opcoId/cfakeyinfo', querySchema: 'cfakeyinfo-query' },
  { route: 'GET /dossiers', path: '/:opcoId/dossiers', querySchema: 'dossier-query' },
  { route: 'GET /dossiers/etats', path: '/:opcoId/dossiers/etats', querySchema: 'etats-query' },
  { route: 'GET /dossiers/liste', path: '/:opcoId/dossiers/liste', querySchema: 'liste-query' },
  { route: 'GET /factures/etats', path: '/:opcoId/factures/etats', querySchema: 'factures-etats-query' },
];

export interface ReadRouteDeps {
  opcos: OpcoRegistry;
  pipeline: Pipeline;
  window: MetricsWindow;
  startedAt: number;
}

export function mountReadRoutes(router: Router<State>, deps: ReadRouteDeps): void {
  for (const read of READ_ROUTES) {
    router.get(read.path, async (ctx) => {
      const call = deps.opcos.context(ctx.params.opcoId, read.route, ctx.state.tenant!);
      call.query = checkQuery(ctx.query, read.querySchema);
      ctx.body = await deps.pipeline.run(call);
      if (call.cache !== 'none') ctx.set('X-Cache', call.cache === 'hit' ? 'HIT' : 'MISS');
    });
  }
  router.get('/:opcoId/status', async (ctx) => {
    const call = deps.opcos.context(ctx.params.opcoId, 'GET /status', ctx.state.tenant!);
    const { profile } = call.opco;
    let upstream: unknown;
    let failure: ServiceError | undefined;
    try {
      upstream = await deps.pipeline.run(call);
    } catch (err) {
      failure = err as ServiceError;
    }
    const window = deps.window.snapshot(call.opco.id);
    ctx.body = {
      status: healthVerdict(failure, window.errorRate, window.rateLimited),
      supportedVersions: upstreamVersions(upstream) ?? profile.versions,
      uptime: Math.round((Date.now() - deps.startedAt) / 1000),
    };
  });
}

/** Query strings arrive as strings; a repeated parameter is refused rather than guessed at. */
function checkQuery(query: Record<string, string | string[] | undefined>, schema?: string): Record<string, string> {
  const flat: Record<string, string> = {};
  const errors: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) errors.push(`${name}: must be given once`);
    else if (value !== undefined) flat[name] = value;
  }
  if (errors.length === 0 && schema) {
    const result = validate(schema, flat);
    if (!result.valid) errors.push(...result.errors);
  }
  if (errors.length > 0) throw createError('VALIDATION_ERROR', 'invalid query parameters', { errors });
  return flat;
}

/** D13: unreachable or 5xx is unhealthy; errors >= 5% or any 429 in the window is degraded. */
function healthVerdict(failure: ServiceError | undefined, errorRate: number, rateLimited: number): 'healthy' | 'degraded' | 'unhealthy' {
  if (failure) {
    if (failure.code === 'RATE_LIMITED' || failure.status === 429) return 'degraded';
    if (['TIMEOUT', 'NETWORK_ERROR', 'UPSTREAM_INVALID_RESPONSE'].includes(failure.code) || failure.status >= 500) return 'unhealthy';
    return 'degraded';
  }
  return errorRate >= 0.05 || rateLimited > 0 ? 'degraded' : 'healthy';
}

function upstreamVersions(body: unknown): string[] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const versions = record.supportedVersions ?? record.versions;
  return Array.isArray(versions) && versions.every((v) => typeof v === 'string') ? versions : undefined;
}
