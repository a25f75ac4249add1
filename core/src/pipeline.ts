/**
 * The request pipeline of SPEC 1.1, for every upstream call, synchronous or from a worker.
 * Steps 1-2 (adapter, capability) happen when the call context is made (`call-context`
 * factory in opco-registry); this runs steps 3 to 10.
 */
import { applyTransforms } from './transforms.js';
import { asServiceError } from './errors.js';
import { checkAnswer } from './response-validation.js';
import type { Hooks } from './hooks.js';
import type { CallContext } from './call-context.js';
import type { UpstreamClient } from './upstream-client.js';
import type { MetricsWindow, PrometheusMetrics } from './metrics.js';
import type { Logger } from './logger.js';

export interface PipelineDeps {
  hooks: Hooks;
  client: UpstreamClient;
  window: MetricsWindow;
  prometheus: PrometheusMetrics;
  log: Logger;
}

export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  /** Runs the call and returns the transformed upstream answer (or throws a ServiceError). */
  async run(ctx: CallContext): Promise<unknown> {
    const { hooks } = this.deps;
    if (ctx.method === 'GET' && !ctx.fresh) {
      const cached = await hooks.runLookup(ctx); // step 3
      if (cached) {
        ctx.cache = 'hit';
        return cached.body;
      }
      if (hooks.count('lookup') > 0) ctx.cache = 'miss';
    }
    await hooks.runPipeline('admit', ctx); // step 4
    try {
      await this.callUpstream(ctx);
    } catch (err) {
      ctx.error = asServiceError(err);
    } finally {
      await ctx.releaseBudget?.();
    }
    this.record(ctx); // step 9
    await hooks.runPipeline('afterCall', ctx);
    if (ctx.error) throw ctx.error;
    if (ctx.method === 'GET') await hooks.runPipeline('store', ctx); // step 10
    return ctx.response!.body;
  }

  private async callUpstream(ctx: CallContext): Promise<void> {
    const { request = [], response = [] } = ctx.routeProfile;
    if (ctx.method === 'GET') ctx.query = applyTransforms(ctx.query, request) as Record<string, string>; // step 5
    else ctx.body = applyTransforms(ctx.body, request);
    await this.deps.hooks.runPipeline('beforeCall', ctx);
    const answer = await this.deps.client.call(ctx); // step 6
    answer.body = applyTransforms(answer.body, response); // step 7
    ctx.warnings.push(...checkAnswer(ctx.route, answer.body)); // step 8
    ctx.response = answer;
  }

  private record(ctx: CallContext): void {
    const { window, prometheus, log } = this.deps;
    const latencyMs = Date.now() - ctx.startedAt;
    const status = ctx.error ? ctx.error.status : (ctx.response?.status ?? 0);
    window.record(ctx.opco.id, { route: ctx.route, latencyMs, status, error: Boolean(ctx.error), warnings: ctx.warnings.length });
    prometheus.upstreamCalls.inc({ opco: ctx.opco.id, route: ctx.route, status: String(status) });
    prometheus.upstreamLatency.observe({ opco: ctx.opco.id, route: ctx.route }, latencyMs / 1000);
    if (ctx.warnings.length > 0) {
      prometheus.driftWarnings.inc({ opco: ctx.opco.id, route: ctx.route });
      log.warn({ opcoId: ctx.opco.id, route: ctx.route, warnings: ctx.warnings.slice(0, 20) }, 'upstream answer drifted from the schema');
    }
    if (ctx.error) {
      log.warn({ opcoId: ctx.opco.id, route: ctx.route, code: ctx.error.code, status, latencyMs }, 'upstream call failed');
    }
  }
}
