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
import { definePlugin, sha256Hex, type CallContext, type PluginApi } from '@opco-proxy/core';
import { AnswerMemory } from './answer-memory.js';
import type { CacheConfig } from './generated/config.js';

export type { CacheConfig };

interface CacheEntry {
  _id: string;
  tenant: string;
  opcoId: string;
  route: string;
  /** JSON text: upstream field names may hold characters a document store refuses. */
  payload: string;
  expiresAt: Date;
}

/** Keys of the reads seen lately: a hot read is the same text each time, hashed once (bounded). */
const recentKeys = new Map<string, string>();
const RECENT_KEYS_MAX = 1024;
/**
 * Keys by query object: the read shortcut passes the same frozen query for a URL each time, so
 * its key is found without sorting and serialising the query again.
 */
const keysByQuery = new WeakMap<object, Map<string, string>>();

/** SPEC 1.1 step 3: opcoId, tenant hash, method, path and a hash of the query parameters. */
export function cacheKey(ctx: Pick<CallContext, 'opco' | 'tenant' | 'route' | 'query'>): string {
  const frozen = Object.isFrozen(ctx.query);
  const caller = `${ctx.opco.id}\n${ctx.tenant.hash}\n${ctx.route}`;
  let byCaller = frozen ? keysByQuery.get(ctx.query) : undefined;
  const known = byCaller?.get(caller);
  if (known !== undefined) return known;
  const query = Object.keys(ctx.query)
    .sort()
    .map((name) => [name, ctx.query[name]]);
  // One hash of the whole key: the query's own hash inside it would add nothing but a digest.
  const text = JSON.stringify([ctx.opco.id, ctx.tenant.hash, ctx.route, query]);
  let key = recentKeys.get(text);
  if (key === undefined) {
    key = sha256Hex(text);
    if (recentKeys.size >= RECENT_KEYS_MAX) recentKeys.clear();
    recentKeys.set(text, key);
  }
  if (frozen) {
    if (!byCaller) keysByQuery.set(ctx.query, (byCaller = new Map<string, string>()));
    // Bounded like the others: a URL read by a stream of distinct keys keeps the last 1,024.
    if (byCaller.size >= RECENT_KEYS_MAX) byCaller.clear();
    byCaller.set(caller, key);
  }
  return key;
}

export function registerCache(api: PluginApi<CacheConfig>): void {
  const { maxEntries, maxBytes } = api.config;
  const memory = maxEntries > 0 && maxBytes > 0 ? new AnswerMemory({ maxEntries, maxBytes }, api.clock) : undefined;
  // A store no other process reads adds nothing to this process's memory.
  const entries = memory && !api.store.shared ? undefined : api.store.collection<CacheEntry>('cache');
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
      const json = memory.get(cacheKey(ctx));
      if (json === undefined) return undefined;
      lookups.inc({ opco: ctx.opco.id, result: 'memory' });
      return { json, source: 'memory' };
    });
  }

  api.addHook('lookup', async (ctx) => {
    if (!ctx.routeProfile.cacheTtlS) return undefined;
    const key = cacheKey(ctx);
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
    const entry = { tenant: ctx.tenant.hash, opcoId: ctx.opco.id, route: ctx.route, payload, expiresAt: new Date(expiresAt) };
    await entries.findOneAndUpdate({ _id: key }, { $set: entry }, { upsert: true });
  });

  // Expired entries are never served (lookups check expiresAt); the sweep only frees space.
  if (entries) api.every('sweep', api.config.sweepIntervalMs, () => entries.sweepExpired(api.clock.date()));
}

export default definePlugin({ name: 'cache', register: registerCache });
