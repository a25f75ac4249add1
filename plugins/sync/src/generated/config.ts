/**
 * generated — do not edit. Source: plugins/sync/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * Bulk sync and pollers (D19-D21).
 */
export interface SyncConfig {
  /**
   * Attempts of a sync batch before it fails (a job: SPEC 8, 3); the waits between them are backoffMs, the last repeated
   */
  attempts: number;
  /**
   * Waits between the attempts of a batch.
   *
   * @minItems 1
   */
  backoffMs: [number, ...number[]];
  /**
   * How long a worker holds a discovery, a batch or a poll without renewing.
   */
  leaseMs: number;
  /**
   * Sync messages in flight per worker
   */
  prefetch: number;
  /**
   * Share of a worker's prefetch one tenant's sync messages may hold at once (at least one), so another tenant's sync always finds a slot (D11, issue 38)
   */
  tenantShare: number;
  /**
   * How often lost sync messages are re-queued.
   */
  sweepIntervalMs: number;
  /**
   * The shortest wait between two looks for due polls: between them a worker sleeps until the next poll is due, sync.sweepIntervalMs at most.
   */
  pollTickMs: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/sync.schema.json",
  "title": "SyncConfig",
  "type": "object",
  "additionalProperties": false,
  "description": "Bulk sync and pollers (D19-D21).",
  "properties": {
    "attempts": {
      "type": "integer",
      "minimum": 1,
      "maximum": 20,
      "default": 3,
      "description": "Attempts of a sync batch before it fails (a job: SPEC 8, 3); the waits between them are backoffMs, the last repeated"
    },
    "backoffMs": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "integer",
        "minimum": 0
      },
      "description": "Waits between the attempts of a batch.",
      "default": [
        1000,
        2000,
        4000
      ]
    },
    "leaseMs": {
      "type": "integer",
      "minimum": 100,
      "description": "How long a worker holds a discovery, a batch or a poll without renewing.",
      "default": 30000
    },
    "prefetch": {
      "type": "integer",
      "minimum": 1,
      "maximum": 256,
      "default": 4,
      "description": "Sync messages in flight per worker"
    },
    "tenantShare": {
      "type": "number",
      "exclusiveMinimum": 0,
      "maximum": 1,
      "default": 0.75,
      "description": "Share of a worker's prefetch one tenant's sync messages may hold at once (at least one), so another tenant's sync always finds a slot (D11, issue 38)"
    },
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often lost sync messages are re-queued.",
      "default": 60000
    },
    "pollTickMs": {
      "type": "integer",
      "minimum": 10,
      "description": "The shortest wait between two looks for due polls: between them a worker sleeps until the next poll is due, sync.sweepIntervalMs at most.",
      "default": 1000
    }
  }
};
