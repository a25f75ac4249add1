/**
 * The cache's keys (SPEC 1.1 step 3): opcoId, tenant hash, route and the query parameters, in
 * one SHA-256. Each plugin instance holds its own memory of the keys it has made, so kernels in
 * one process (tests, embedders) share nothing; both memories are bounded.
 */
import { sha256Hex, type CallContext } from '@opco-proxy/core';

/** What a key is made of. */
export type KeyedCall = Pick<CallContext, 'opco' | 'tenant' | 'route' | 'query'>;

/** Bound of each memory: past it, that memory starts again empty (cheaper than an LRU per call). */
const KEYS_MAX = 1024;

export class CacheKeys {
  /** Keys of the reads seen lately: a hot read is the same text each time, hashed once. */
  private readonly recentKeys = new Map<string, string>();
  /**
   * Keys by query object: the read shortcut passes the same frozen query for a URL each time, so
   * its key is found without sorting and serialising the query again.
   */
  private readonly keysByQuery = new WeakMap<object, Map<string, string>>();

  /** The key of this call's answer. */
  keyFor(ctx: KeyedCall): string {
    const frozen = Object.isFrozen(ctx.query);
    const caller = `${ctx.opco.id}\n${ctx.tenant.hash}\n${ctx.route}`;
    let byCaller = frozen ? this.keysByQuery.get(ctx.query) : undefined;
    const known = byCaller?.get(caller);
    if (known !== undefined) return known;
    const query = Object.keys(ctx.query)
      .sort()
      .map((name) => [name, ctx.query[name]]);
    // One hash of the whole key: the query's own hash inside it would add nothing but a digest.
    const text = JSON.stringify([ctx.opco.id, ctx.tenant.hash, ctx.route, query]);
    let key = this.recentKeys.get(text);
    if (key === undefined) {
      key = sha256Hex(text);
      if (this.recentKeys.size >= KEYS_MAX) this.recentKeys.clear();
      this.recentKeys.set(text, key);
    }
    if (frozen) {
      if (!byCaller) this.keysByQuery.set(ctx.query, (byCaller = new Map<string, string>()));
      // Bounded like the other: a URL read with a stream of distinct API keys holds at most 1,024.
      if (byCaller.size >= KEYS_MAX) byCaller.clear();
      byCaller.set(caller, key);
    }
    return key;
  }

  /** How many key texts the memory holds (at most 1,024): what tests of its bound read. */
  get remembered(): number {
    return this.recentKeys.size;
  }
}
