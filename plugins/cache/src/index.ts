/**
 * The cache plugin: pipeline steps 3 and 10 (SPEC 1.1). Entries live in the Store, so every
 * instance on MongoDB shares them, and in a bounded in-process LRU in front of it, so a hit
 * usually costs no round trip. Each is keyed by opcoId, tenant hash, method, path and the query,
 * hashed, so no tenant ever reads another's; an answer is kept as JSON (text in the Store, its
 * UTF-8 bytes in the process) and served as such (no parse and re-serialisation per hit). POST
 * is never cached.
 *
 * On the embedded store the LRU is the whole cache: that store lives in this one process, so its
 * copy would share nothing and, bounded by nothing but expiry, hold a second copy of every answer.
 */
import { definePlugin, type CallContext, type PluginApi } from '@opco-proxy/core';
import { AnswerMemory } from './answer-memory.js';
import { CacheKeys } from './cache-keys.js';
import type { CacheConfig } from './generated/config.js';

export type { CacheConfig };
export { CacheKeys, type KeyedCall } from './cache-keys.js';

interface CacheEntry {
  _id: string;
  tenant: string;
  opcoId: string;
  route: string;
  /** JSON text: upstream field names may hold characters a document store refuses. */
  payload: string;
  expiresAt: Date;
}

export function registerCache(api: PluginApi<CacheConfig>): void {
  const { maxEntries, maxBytes } = api.config;
  const memory = maxEntries > 0 && maxBytes > 0 ? new AnswerMemory({ maxEntries, maxBytes }, api.clock) : undefined;
  // A store no other process reads adds nothing to this process's memory.
  const entries = memory && !api.store.shared ? undefined : api.store.collection<CacheEntry>('cache');
  // This kernel's own: another kernel in the process (tests, embedders) keeps its own keys.
  const cacheKeys = new CacheKeys();
  const keys = new WeakMap<CallContext, string>();
  const lookups = api.metrics.counter({
    name: 'opco_proxy_cache_lookups_total',
    help: 'Cache lookups by result (memory: in-process hit, store: shared hit, miss)',
    labelNames: ['opco', 'result'] as const,
  });

  // A hit in memory answers before the request enters the middleware chain; a miss is counted by
  // the lookup that follows on the whole path.
  if (memory) {
    api.addHook('peek', (ctx) => {
      if (!ctx.routeProfile.cacheTtlS) return undefined;
      const json = memory.get(cacheKeys.keyFor(ctx));
      if (json === undefined) return undefined;
      lookups.inc({ opco: ctx.opco.id, result: 'memory' });
      return { json, source: 'memory' };
    });
  }

  api.addHook('lookup', async (ctx) => {
    if (!ctx.routeProfile.cacheTtlS) return undefined;
    const key = cacheKeys.keyFor(ctx);
    keys.set(ctx, key);
    const local = memory?.get(key);
    if (local !== undefined) {
      lookups.inc({ opco: ctx.opco.id, result: 'memory' });
      return { json: local, source: 'memory' };
    }
    const entry = await entries?.findOne({ _id: key, expiresAt: { $gt: api.clock.date() } });
    lookups.inc({ opco: ctx.opco.id, result: entry ? 'store' : 'miss' });
    if (!entry) return undefined;
    const json = Buffer.from(entry.payload);
    memory?.set(key, json, entry.expiresAt.getTime());
    return { json, source: 'store' };
  });

  api.addHook('store', async (ctx) => {
    const ttlS = ctx.routeProfile.cacheTtlS;
    const key = keys.get(ctx);
    if (!ttlS || !key || !ctx.response) return;
    const payload = JSON.stringify(ctx.response.body);
    // Encoded once: the bytes the LRU keeps are the ones this first answer writes.
    const json = Buffer.from(payload);
    ctx.answerJson = json;
    const expiresAt = api.clock.now() + ttlS * 1000;
    memory?.set(key, json, expiresAt);
    if (!entries) return;
    const entry = {
      tenant: ctx.tenant.hash,
      opcoId: ctx.opco.id,
      route: ctx.route,
      payload,
      expiresAt: new Date(expiresAt),
    };
    await entries.findOneAndUpdate({ _id: key }, { $set: entry }, { upsert: true });
  });

  // Expired entries are never served (lookups check expiresAt); the sweep only frees space.
  if (entries) api.every('sweep', api.config.sweepIntervalMs, () => entries.sweepExpired(api.clock.date()));
}

export default definePlugin({ name: 'cache', register: registerCache });
