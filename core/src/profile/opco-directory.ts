/**
 * Pipeline steps 1 and 2 (SPEC 1.1): the configured opcoIds resolved against their adapters'
 * profiles, and the making of a call context for a route they support. Plugins get this
 * directory; the upstream credentials are not in it (upstream-auth/).
 */
import { createError } from '../errors/errors.js';
import { loadModule, packageName, type Bundled } from '../host/module-loader.js';
import { ConfigError, type OpcoConfig } from '../config/config.js';
import { kernelError } from '../errors/kernel-errors.js';
import { profileFormat, profileProblems, SUPPORTED_PROFILE_FORMATS, withProfileDefaults } from './profile-format.js';
import type { AdapterModule, Profile, ProfileDefinition, RouteKey, RouteProfile } from './profile.js';
import type { CallContext, FileContent, Opco, Tenant } from '../pipeline/call-context.js';
import { PRIORITY } from '../pipeline/call-context.js';
import type { Clock } from '../clock.js';

export interface CallInput {
  query?: Record<string, string>;
  body?: unknown;
  files?: Record<string, FileContent>;
  priority?: number;
  /** A client waits for the answer over HTTP (the read routes); false for workers (default). */
  synchronous?: boolean;
  cancelled?: () => boolean | Promise<boolean>;
  deferrable?: boolean;
  fresh?: boolean;
  requestId?: string;
  traceparent?: string;
}

export class OpcoDirectory {
  private constructor(
    private readonly opcos: Map<string, Opco>,
    private readonly clock: Clock,
  ) {}

  static async load(entries: Record<string, OpcoConfig>, clock: Clock, bundled: Bundled = {}): Promise<OpcoDirectory> {
    const opcos = new Map<string, Opco>();
    for (const [id, entry] of Object.entries(entries)) {
      const profile = await loadProfile(id, entry.adapter, bundled);
      opcos.set(id, {
        id,
        adapter: entry.adapter,
        profile: withCacheOverrides(profile, entry.cacheTtlS, id),
        baseUrl: entry.baseUrl,
        rateLimit: entry.rateLimit ?? profile.rateLimit,
        pollingIntervalMs: entry.pollingIntervalMs ?? profile.polling.intervalMs,
      });
    }
    return new OpcoDirectory(opcos, clock);
  }

  list(): Opco[] {
    return [...this.opcos.values()];
  }

  has(opcoId: string): boolean {
    return this.opcos.has(opcoId);
  }

  /** Step 1: unknown opcoId gives 404 NOT_FOUND. */
  get(opcoId: string): Opco {
    const opco = this.opcos.get(opcoId);
    if (!opco) throw createError('NOT_FOUND', `unknown opcoId "${opcoId}"`);
    return opco;
  }

  /** Step 2: a route the profile does not declare gives 501 NOT_SUPPORTED. */
  route(opco: Opco, route: RouteKey): RouteProfile {
    const routeProfile = opco.profile.routes[route];
    if (!routeProfile) throw createError('NOT_SUPPORTED', `${route} is not supported by ${opco.id}`);
    return routeProfile;
  }

  context(opcoId: string, route: RouteKey, tenant: Tenant, input: CallInput = {}): CallContext {
    const opco = this.get(opcoId);
    const routeProfile = this.route(opco, route);
    const priority = input.priority ?? PRIORITY.client;
    return {
      opco,
      route,
      routeProfile,
      method: route.startsWith('GET ') ? 'GET' : 'POST',
      tenant,
      query: input.query ?? {},
      body: input.body,
      files: input.files,
      priority,
      synchronous: input.synchronous ?? false,
      cancelled: input.cancelled,
      deferrable: input.deferrable,
      fresh: input.fresh,
      requestId: input.requestId,
      traceparent: input.traceparent,
      upstreamHeaders: {},
      warnings: [],
      startedAt: this.clock.now(),
      cache: 'none',
    };
  }
}

/**
 * The adapter's profile as the service runs it: refused when written for a profile format this
 * service does not read, or when a key is missing or of the wrong type; defaults filled.
 */
export async function loadProfile(opcoId: string, adapter: string, bundled: Bundled = {}): Promise<Profile> {
  const key = `opcos.${opcoId}.adapter`;
  const module = await loadModule<AdapterModule>('adapter', adapter, key, bundled);
  const definition: unknown = module?.profile;
  if (typeof definition !== 'object' || definition === null)
    throw new ConfigError(`invalid configuration: ${key}: "${adapter}" exports no profile`);
  const pkg = packageName('adapter', adapter);
  const format = profileFormat(definition);
  if (typeof format !== 'number' && Number.isInteger((definition as { formatVersion?: unknown }).formatVersion)) {
    throw kernelError('OPCO_ERR_PROFILE_FORMAT_UNSUPPORTED', {
      key,
      package: pkg,
      target: (definition as { formatVersion: number }).formatVersion,
      supported: SUPPORTED_PROFILE_FORMATS.join(', '),
    });
  }
  const problems = profileProblems(definition);
  if (problems.length > 0) {
    throw kernelError('OPCO_ERR_PROFILE_INVALID', {
      key,
      package: pkg,
      problems: problems.map((p) => `${p.key}: ${p.problem}`).join('; '),
    });
  }
  return withProfileDefaults(definition as ProfileDefinition);
}

/** The operator may shorten or lengthen a profile's cache lifetimes per route (config `cacheTtlS`). */
function withCacheOverrides(profile: Profile, overrides: Record<string, number> | undefined, opcoId: string): Profile {
  if (!overrides) return profile;
  const routes = { ...profile.routes };
  for (const [route, ttl] of Object.entries(overrides)) {
    const routeProfile = routes[route as RouteKey];
    if (!routeProfile)
      throw new ConfigError(
        `invalid configuration: opcos.${opcoId}.cacheTtlS: "${route}" is not a route of ${profile.id}`,
      );
    routes[route as RouteKey] = { ...routeProfile, cacheTtlS: ttl };
  }
  return { ...profile, routes };
}
