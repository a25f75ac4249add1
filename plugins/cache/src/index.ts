/**
 * The cache plugin: pipeline steps 3 and 10 (SPEC 1.1). Entries live in the Store, so every
 * instance on MongoDB shares them; each is keyed by opcoId, tenant hash, method, path and a
 * hash of the query, so no tenant ever reads another's. POST is never cached.
 */
import { definePlugin, sha256Hex, type CallContext, type PluginApi } from '@opco-proxy/core';

interface CacheEntry {
  _id: string;
  tenant: string;
  opcoId: string;
  route: string;
  /** JSON text: upstream field names may hold characters a document store refuses. */
  payload: string;
  expiresAt: Date;
}

/** SPEC 1.1 step 3: opcoId, tenant hash, method, path and a hash of the query parameters. */
export function cacheKey(ctx: Pick<CallContext, 'opco' | 'tenant' | 'route' | 'query'>): string {
  const query = Object.keys(ctx.query)
    .sort()
    .map((name) => [name, ctx.query[name]]);
  return sha256Hex(JSON.stringify([ctx.opco.id, ctx.tenant.hash, ctx.route, sha256Hex(JSON.stringify(query))]));
}

export function registerCache(api: PluginApi): void {
  const entries = api.store.collection<CacheEntry>('cache');
  const keys = new WeakMap<CallContext, string>();

  api.hooks.add('lookup', async (ctx) => {
    if (!ctx.routeProfile.cacheTtlS) return undefined;
    const key = cacheKey(ctx);
    keys.set(ctx, key);
    const entry = await entries.findOne({ _id: key, expiresAt: { $gt: new Date() } });
    api.prometheus.cacheLookups.inc({ opco: ctx.opco.id, result: entry ? 'hit' : 'miss' });
    return entry ? { body: JSON.parse(entry.payload), source: 'store' } : undefined;
  });

  api.hooks.add('store', async (ctx) => {
    const ttlS = ctx.routeProfile.cacheTtlS;
    const key = keys.get(ctx);
    if (!ttlS || !key || !ctx.response) return;
    const entry = { tenant: ctx.tenant.hash, opcoId: ctx.opco.id, route: ctx.route, payload: JSON.stringify(ctx.response.body), expiresAt: new Date(Date.now() + ttlS * 1000) };
    await entries.findOneAndUpdate({ _id: key }, { $set: entry }, { upsert: true });
  });

  // Expired entries are never served (the lookup filters on expiresAt); the sweep only frees space.
  const sweeper = setInterval(() => {
    entries.sweepExpired().catch((err) => api.log.warn({ err }, 'cache sweep failed'));
  }, api.config.cache.sweepIntervalMs);
  sweeper.unref();
  api.hooks.add('close', () => clearInterval(sweeper));
}

export default definePlugin({ name: 'cache', register: registerCache });
