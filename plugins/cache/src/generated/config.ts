/**
 * generated — do not edit. Source: plugins/cache/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * Step 3 and 10 cache: entries kept in the Store (shared by instances) and, in front of it, a bounded in-process LRU. On the embedded store the LRU is the whole cache (that store lives in the one process).
 */
export interface CacheConfig {
  /**
   * How often expired entries are deleted from the Store.
   */
  sweepIntervalMs: number;
  /**
   * Answers the in-process LRU keeps at most (default 10000; 0 turns the LRU off).
   */
  maxEntries: number;
  /**
   * Bytes of answers the in-process LRU keeps at most (default 67108864, 64 MiB; 0 turns the LRU off). An answer larger than this is only kept in the Store.
   */
  maxBytes: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/cache.schema.json",
  "title": "CacheConfig",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often expired entries are deleted from the Store.",
      "default": 60000
    },
    "maxEntries": {
      "type": "integer",
      "minimum": 0,
      "description": "Answers the in-process LRU keeps at most (default 10000; 0 turns the LRU off).",
      "default": 10000
    },
    "maxBytes": {
      "type": "integer",
      "minimum": 0,
      "description": "Bytes of answers the in-process LRU keeps at most (default 67108864, 64 MiB; 0 turns the LRU off). An answer larger than this is only kept in the Store.",
      "default": 67108864
    }
  },
  "description": "Step 3 and 10 cache: entries kept in the Store (shared by instances) and, in front of it, a bounded in-process LRU. On the embedded store the LRU is the whole cache (that store lives in the one process)."
};
