/**
 * The cache's in-process layer: answers as the UTF-8 bytes of their JSON, bounded by entries and
 * by bytes (least recently used first out), each valid until its own expiry on the kernel's
 * clock, so it expires exactly when the Store's copy does, injected test clocks included.
 *
 * Bytes rather than strings: a hit is written to the socket without being encoded again, and an
 * answer lives outside V8's heap. Kept as strings, answers outlived the young generation, and
 * each one the LRU let go became old-space garbage that V8 collected only once old space had
 * grown to several times what the LRU held: with the default 64 MiB the process went past
 * 460 MiB under a stream of distinct reads (bench/RESULTS.md).
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '@opco-proxy/core';

export interface MemoryLimits {
  maxEntries: number;
  maxBytes: number;
}

interface Kept {
  json: Buffer;
  expiresAt: number;
}

export class AnswerMemory {
  private readonly lru: LRUCache<string, Kept>;

  constructor(
    limits: MemoryLimits,
    private readonly clock: Clock,
  ) {
    this.lru = new LRUCache<string, Kept>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      sizeCalculation: (kept) => Math.max(1, kept.json.length),
    });
  }

  /** The answer kept under `key`, unless absent or expired (an expired one is dropped). */
  get(key: string): Buffer | undefined {
    const kept = this.lru.get(key);
    if (!kept) return undefined;
    if (kept.expiresAt > this.clock.now()) return kept.json;
    this.lru.delete(key);
    return undefined;
  }

  /** An answer larger than maxBytes is not kept (lru-cache refuses it). */
  set(key: string, json: Buffer, expiresAt: number): void {
    if (expiresAt > this.clock.now()) this.lru.set(key, { json, expiresAt });
  }

  get entries(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
