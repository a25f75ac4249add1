/**
 * The cache's in-process layer: answers as JSON text, bounded by entries and by bytes (least
 * recently used first out), each valid until its own expiry on the kernel's clock, so it expires
 * exactly when the Store's copy does, injected test clocks included.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '@opco-proxy/core';

export interface MemoryLimits {
  maxEntries: number;
  maxBytes: number;
}

interface Kept {
  text: string;
  expiresAt: number;
}

export class AnswerMemory {
  private readonly lru: LRUCache<string, Kept>;

  constructor(limits: MemoryLimits, private readonly clock: Clock) {
    this.lru = new LRUCache<string, Kept>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      // Answers are mostly ASCII JSON, which V8 keeps at one byte a character.
      sizeCalculation: (kept) => Math.max(1, kept.text.length),
    });
  }

  /** The answer kept under `key`, unless absent or expired (an expired one is dropped). */
  get(key: string): string | undefined {
    const kept = this.lru.get(key);
    if (!kept) return undefined;
    if (kept.expiresAt > this.clock.now()) return kept.text;
    this.lru.delete(key);
    return undefined;
  }

  /** An answer larger than maxBytes is not kept (lru-cache refuses it). */
  set(key: string, text: string, expiresAt: number): void {
    if (expiresAt > this.clock.now()) this.lru.set(key, { text, expiresAt });
  }

  get entries(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
