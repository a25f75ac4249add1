/**
 * The request pipeline of SPEC 1.1, for every upstream call, synchronous or from a worker.
 * Steps 1-2 (adapter, capability) happen when the call context is made (OpcoDirectory.context);
 * this runs steps 3 to 10. Step 4 asks the admission seam's one provider for a lease, whose
 * headers go upstream with the call and which is released with the call's outcome.
 */
import { applyTransforms } from '../profile/transforms.js';
import { sha256Hex } from '../crypto/crypto.js';
import { asServiceError } from '../errors/errors.js';
import { checkAnswer } from './response-validation.js';
import { AuthRefreshNeeded } from './upstream-client.js';
import type { Hooks } from '../host/hooks.js';
import type { CallContext } from './call-context.js';
import type { UpstreamClient } from './upstream-client.js';
import type { MetricsWindow, PrometheusMetrics } from '../observability/metrics.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../clock.js';
import { unprovenSlice, type AdmissionProvider } from '../limits/admission.js';
import { callVerdict, keyAccepted, type CallVerdict } from './call-verdict.js';
import type { TenantStanding } from '../limits/tenant-standing.js';

export interface PipelineDeps {
  hooks: Hooks;
  client: UpstreamClient;
  /** The admission seam's provider, known once every plugin has registered. */
  admission: () => AdmissionProvider;
  window: MetricsWindow;
  prometheus: PrometheusMetrics;
  log: Logger;
  clock: Clock;
  /**
   * What the upstream said of each tenant's key (issue 27): refused keys stop here, unproven ones
   * share a slice. Absent (the adapter kit's replay, which tests a profile), every key is proven.
   */
  standing?: TenantStanding;
  /** Share of each window's budget that unproven tenants may use while strangers are about (`tenantKeys.unprovenShare`). */
  unprovenShare?: number;
  /** The same share while no unproven key was refused lately at the opcoId (`tenantKeys.calmUnprovenShare`). */
  calmUnprovenShare?: number;
}

export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  /** Runs the call and returns the transformed upstream answer (or throws a ServiceError). */
  async run(ctx: CallContext): Promise<unknown> {
    const answer = await this.serve(ctx);
    return answer.body !== undefined ? answer.body : JSON.parse(answer.json!.toString());
  }

  /**
   * Runs the call for an HTTP answer: a cache hit comes back as the JSON that was kept (no
   * parse, no re-serialisation), a fresh answer as its value and, once cached, its text.
   */
  async serve(ctx: CallContext): Promise<{ body?: unknown; json?: Buffer | string }> {
    const { hooks } = this.deps;
    if (ctx.method === 'GET' && !ctx.fresh) {
      const cached = await hooks.runLookup(ctx); // step 3
      if (cached) {
        ctx.cache = 'hit';
        return { json: cached.json };
      }
      if (hooks.count('lookup') > 0) ctx.cache = 'miss';
    }
    const claim = (await this.deps.standing?.claim(ctx.opco.id, ctx.tenant.hash)) ?? {
      standing: 'proven' as const,
      done: () => undefined,
    };
    try {
      await this.transformRequest(ctx); // step 5
      const proven = claim.standing === 'proven';
      await this.admitAndCall(ctx, proven);
      const verdict = callVerdict(ctx.error);
      this.record(ctx, verdict); // step 9
      await this.learnStanding(ctx, verdict, proven);
    } finally {
      claim.done();
    }
    await hooks.runPipeline('afterCall', ctx);
    if (ctx.error) throw ctx.error;
    if (ctx.method === 'GET') await hooks.runPipeline('store', ctx); // step 10
    return { body: ctx.response!.body, json: ctx.answerJson };
  }

  /**
   * Steps 4 and 6. A 401 the authentication can cure (a token to refresh) is answered by a
   * second call, admitted like any other: it counts against the budget and carries its own grant.
   */
  private async admitAndCall(ctx: CallContext, proven: boolean): Promise<void> {
    const { clock } = this.deps;
    const unprovenLimit = proven
      ? unprovenSlice(ctx.opco.rateLimit.limit, this.deps.unprovenShare ?? 1)
      : await this.unprovenLimit(ctx);
    for (let refreshAllowed = true; ; refreshAllowed = false) {
      const lease = await this.deps.admission().admit({
        opcoId: ctx.opco.id,
        rateLimit: ctx.opco.rateLimit,
        route: ctx.route,
        method: ctx.method,
        priority: ctx.priority,
        tenant: ctx.tenant.hash,
        synchronous: ctx.synchronous,
        cancelled: ctx.cancelled,
        deferrable: ctx.deferrable,
        proven,
        unprovenLimit,
      }); // step 4
      this.deps.prometheus.budgetCalls.inc({ opco: ctx.opco.id, tenant: proven ? 'proven' : 'unproven' });
      ctx.leaseHeaders = lease.headers;
      const calledAt = clock.now();
      let refresh = false;
      try {
        await this.callUpstream(ctx, refreshAllowed);
      } catch (err) {
        if (err instanceof AuthRefreshNeeded) refresh = true;
        else ctx.error = asServiceError(err);
      } finally {
        // The call has happened whatever the release does: an answer lost to a store outage here
        // would have a job send its dossier again. The slot keeps its claim's stamp.
        try {
          await lease.release({ status: refresh ? 401 : answeredStatus(ctx), latencyMs: clock.now() - calledAt });
        } catch (err) {
          this.deps.log.warn(
            { opcoId: ctx.opco.id, route: ctx.route, err },
            'the end of an upstream call could not be recorded by the admission provider',
          );
        }
      }
      if (!refresh) break;
    }
  }

  /**
   * The slice of the window unproven tenants share (P13): the narrow `unprovenShare` while an
   * unproven key was refused lately at this opcoId (strangers inventing keys are about), the
   * wide `calmUnprovenShare` otherwise, so that a publisher onboarding its CFAs is not held to
   * the slice a flood of invented keys is.
   */
  private async unprovenLimit(ctx: CallContext): Promise<number> {
    const { standing, unprovenShare = 1, calmUnprovenShare = unprovenShare } = this.deps;
    const strangers = standing ? await standing.strangersLately(ctx.opco.id) : true;
    return unprovenSlice(
      ctx.opco.rateLimit.limit,
      strangers ? unprovenShare : Math.max(unprovenShare, calmUnprovenShare),
    );
  }

  /**
   * Step 3 alone, synchronous: the JSON of an answer a `peek` hook holds at hand, or
   * undefined (the read then goes through `serve`).
   */
  peek(ctx: CallContext): Buffer | string | undefined {
    if (ctx.method !== 'GET' || ctx.fresh) return undefined;
    const cached = this.deps.hooks.runPeek(ctx);
    if (cached) ctx.cache = 'hit';
    return cached?.json;
  }

  /** Step 5: the profile's request transforms, then the beforeCall hooks; once per call. */
  private async transformRequest(ctx: CallContext): Promise<void> {
    const { request = [] } = ctx.routeProfile;
    if (ctx.method === 'GET') ctx.query = applyTransforms(ctx.query, request) as Record<string, string>;
    else ctx.body = applyTransforms(ctx.body, request);
    await this.deps.hooks.runPipeline('beforeCall', ctx);
  }

  private async callUpstream(ctx: CallContext, refreshAllowed: boolean): Promise<void> {
    const answer = await this.deps.client.call(ctx, refreshAllowed); // step 6
    // The answer was parsed for this call alone: the transforms may rewrite it in place.
    answer.body = applyTransforms(answer.body, ctx.routeProfile.response ?? [], true); // step 7
    ctx.warnings.push(...checkAnswer(ctx.route, answer.body)); // step 8
    ctx.response = answer;
  }

  /**
   * What the answer says of the tenant's key, kept for every instance (P13): an answer the
   * profile recognises as "unknown key" refuses it; another 403 refuses a key never accepted, and
   * one accepted only after several in a row (tenant-standing.ts). A store that fails here does
   * not fail the call, which has happened: the key is judged again at its next call.
   */
  private async learnStanding(ctx: CallContext, verdict: CallVerdict, proven: boolean): Promise<void> {
    const { standing, prometheus } = this.deps;
    if (!standing) return;
    try {
      if (verdict === 'key-refused') {
        prometheus.keyRefusals.inc({ opco: ctx.opco.id });
        await standing.refused(ctx.opco.id, ctx.tenant.hash, proven);
      } else if (verdict === 'forbidden') {
        if (await standing.forbidden(ctx.opco.id, ctx.tenant.hash, requestFingerprint(ctx), proven))
          prometheus.keyRefusals.inc({ opco: ctx.opco.id });
      } else if (keyAccepted(verdict)) {
        await standing.accepted(ctx.opco.id, ctx.tenant.hash);
      }
    } catch (err) {
      this.deps.log.warn(
        { requestId: ctx.requestId, opcoId: ctx.opco.id, err },
        'what the upstream said of the key could not be stored',
      );
    }
  }

  private record(ctx: CallContext, verdict: CallVerdict): void {
    const { window, prometheus, log, clock } = this.deps;
    const latencyMs = clock.now() - ctx.startedAt;
    const status = ctx.error ? ctx.error.status : (ctx.response?.status ?? 0);
    // D13: answers about the client's input or key are the upstream working, not errors.
    const error = verdict === 'failure';
    window.record(ctx.opco.id, { route: ctx.route, latencyMs, status, error, warnings: ctx.warnings.length });
    prometheus.upstreamCalls.inc({ opco: ctx.opco.id, route: ctx.route, status: callOutcome(ctx, status) });
    prometheus.upstreamLatency.observe({ opco: ctx.opco.id, route: ctx.route }, latencyMs / 1000);
    if (ctx.warnings.length > 0) {
      prometheus.driftWarnings.inc({ opco: ctx.opco.id, route: ctx.route });
      log.warn(
        { requestId: ctx.requestId, opcoId: ctx.opco.id, route: ctx.route, warnings: ctx.warnings.slice(0, 20) },
        'upstream answer drifted from the schema',
      );
    }
    if (ctx.error) {
      log.warn(
        { requestId: ctx.requestId, opcoId: ctx.opco.id, route: ctx.route, code: ctx.error.code, status, latencyMs },
        'upstream call failed',
      );
    }
  }
}

/**
 * Which request a 403 refused, so that one request refused again (a client retrying it) counts
 * once in a key's series: the route and its query for a read, the job or request for a write.
 */
function requestFingerprint(ctx: CallContext): string {
  const what =
    ctx.method === 'GET' ? new URLSearchParams(Object.entries(ctx.query).sort()).toString() : (ctx.requestId ?? '');
  return sha256Hex(`${ctx.route} ${what}`).slice(0, 24);
}

/**
 * The upstream calls counter's `status`: what the upstream answered, or `timeout` / `network`
 * when it did not answer (their errors' 504 and 502 would pass for the upstream's own answers).
 */
function callOutcome(ctx: CallContext, status: number): string {
  if (ctx.error?.code === 'TIMEOUT') return 'timeout';
  if (ctx.error?.code === 'NETWORK_ERROR') return 'network';
  return String(status);
}

/** The status the upstream answered with, 0 when no answer came (the hub adapts on 429s, D29). */
function answeredStatus(ctx: CallContext): number {
  if (!ctx.error) return ctx.response?.status ?? 0;
  return ctx.error.code === 'TIMEOUT' || ctx.error.code === 'NETWORK_ERROR' ? 0 : ctx.error.status;
}
