/**
 * The service's own request pipeline (steps 5 to 9: request transforms, upstream client with the
 * profile's authentication, response transforms, response validation), built around one profile
 * and pointed at the fixture upstream. Only what needs the kernel is left out: admission admits
 * at once, there is no cache and no plugin.
 */
import {
  MetricsWindow,
  createLogger,
  isServiceError,
  oauthClientCredentials,
  systemClock,
  tenantHash,
  type AdmissionProvider,
  type CallContext,
  type Profile,
  type RouteKey,
  type ServiceError,
} from '@opco-proxy/core';
import { Pipeline } from '@opco-proxy/core/application';
import { Hooks, UpstreamClient, createPrometheusMetrics } from '@opco-proxy/core/application';
import { startFixtureUpstream, type FixtureUpstream, type ReceivedRequest } from './fixture-upstream.js';
import type { Fixture } from './fixtures.js';

/** The opcoId the kit runs the profile under, and the CFA key it forwards. */
const OPCO_ID = 'adapter-kit';
const CFA_KEY = 'adapter-kit-cfa-key';

export interface AuthInput {
  /** Keys of the opco's config entry, over those the kit fills in for the known strategies. */
  entry?: Record<string, unknown>;
  env?: Record<string, string>;
}

export type CallOutcome =
  | { ok: true; body: unknown; warnings: string[]; request?: ReceivedRequest }
  | { ok: false; error: ServiceError; request?: ReceivedRequest };

export interface Replay {
  upstream: FixtureUpstream;
  /** The headers the profile's authentication gives a call (a token is fetched first when it needs one). */
  authHeaders(): Promise<Record<string, string>>;
  /** Runs one call of `route` answered by `answer`; never throws for what the pipeline throws. */
  call(
    route: RouteKey,
    input: { query?: Record<string, string>; body?: unknown; files?: Record<string, Buffer> },
    answer: Fixture | undefined,
  ): Promise<CallOutcome>;
  close(): Promise<void>;
}

/** Fails (with the strategy's own message) when the authentication cannot be set up. */
export async function startReplay(profile: Profile, token: Fixture | undefined, auth: AuthInput = {}): Promise<Replay> {
  const upstream = await startFixtureUpstream(token);
  try {
    const clock = systemClock;
    const client = new UpstreamClient({
      publisher: { editeur: 'adapter-kit', logiciel: 'adapter-kit', version: '0.1.0' },
      timeoutMs: 5000,
      maxAnswerBytes: 8 * 1024 * 1024,
    });
    const entry = {
      adapter: profile.id,
      baseUrl: upstream.url,
      tokenUrl: upstream.tokenUrl,
      clientId: 'adapter-kit',
      clientSecretEnv: 'ADAPTER_KIT_SECRET',
      apiKeyEnv: 'ADAPTER_KIT_API_KEY',
      ...auth.entry,
    };
    const env = { ADAPTER_KIT_SECRET: 'adapter-kit-secret', ADAPTER_KIT_API_KEY: 'adapter-kit-api-key', ...auth.env };
    const strategy = profile.auth ?? oauthClientCredentials();
    const upstreamAuth = strategy.setup({
      opcoId: OPCO_ID,
      adapter: profile.id,
      entry,
      env,
      clock,
      timeoutMs: 5000,
      send: client.transport,
    });
    client.authenticate(OPCO_ID, upstreamAuth);
    const admitAtOnce: AdmissionProvider = { name: 'adapter-kit', admit: async () => ({ headers: {}, release() {} }) };
    const pipeline = new Pipeline({
      hooks: new Hooks(),
      client,
      admission: () => admitAtOnce,
      window: new MetricsWindow(clock),
      prometheus: createPrometheusMetrics(),
      log: createLogger({ level: 'silent' }),
      clock,
    });
    const opco = {
      id: OPCO_ID,
      adapter: profile.id,
      profile,
      baseUrl: upstream.url,
      rateLimit: profile.rateLimit,
      pollingIntervalMs: profile.polling.intervalMs,
    };
    return {
      upstream,
      authHeaders: () => upstreamAuth.headers(),
      async call(route, input, answer) {
        const routeProfile = profile.routes[route]!;
        const ctx: CallContext = {
          opco,
          route,
          routeProfile,
          method: route.startsWith('GET ') ? 'GET' : 'POST',
          tenant: { hash: tenantHash(CFA_KEY), apiKey: CFA_KEY },
          query: input.query ?? {},
          body: input.body,
          files: input.files,
          priority: 1,
          synchronous: true,
          upstreamHeaders: {},
          warnings: [],
          startedAt: clock.now(),
          cache: 'none',
        };
        upstream.answer = answer;
        const before = upstream.received.length;
        try {
          const body = await pipeline.run(ctx);
          return { ok: true, body, warnings: ctx.warnings, request: upstream.received[before] };
        } catch (err) {
          if (!isServiceError(err)) throw err;
          return { ok: false, error: err, request: upstream.received[before] };
        }
      },
      close: async () => {
        await client.close();
        await upstream.close();
      },
    };
  } catch (err) {
    await upstream.close();
    throw err;
  }
}
