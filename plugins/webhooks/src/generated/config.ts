/**
 * generated — do not edit. Source: plugins/webhooks/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
export interface WebhooksConfig {
  /**
   * Time limit of a delivery attempt, from its start to the end of the answer (SPEC 6.3)
   */
  timeoutMs: number;
  /**
   * Time limit of a delivery attempt's connection, from its start (within timeoutMs)
   */
  connectTimeoutMs: number;
  /**
   * Time limit of the answer's status line and headers, from the attempt's start (within timeoutMs): a receiver that never answers frees its slot then
   */
  headersTimeoutMs: number;
  /**
   * Delays of the delivery attempts
   *
   * @minItems 1
   */
  retryDelaysMs: [number, ...number[]];
  /**
   * Delivery attempts in flight per worker: tenants take turns for them, a quarter are kept for tenants with none in flight, half at most to one tenant's origin
   */
  concurrency: number;
  /**
   * How long delivery logs are kept
   */
  retentionDays: number;
  /**
   * Test notifications (POST /webhooks/{id}/test) per API key and minute, per instance; beyond, 429 RATE_LIMITED
   */
  testsPerMinute: number;
  /**
   * How often deliveries whose queue message was lost are re-queued and expired logs deleted.
   */
  sweepIntervalMs: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/webhooks.schema.json",
  "title": "WebhooksConfig",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "timeoutMs": {
      "type": "integer",
      "minimum": 1,
      "default": 10000,
      "description": "Time limit of a delivery attempt, from its start to the end of the answer (SPEC 6.3)"
    },
    "connectTimeoutMs": {
      "type": "integer",
      "minimum": 1,
      "default": 3000,
      "description": "Time limit of a delivery attempt's connection, from its start (within timeoutMs)"
    },
    "headersTimeoutMs": {
      "type": "integer",
      "minimum": 1,
      "default": 5000,
      "description": "Time limit of the answer's status line and headers, from the attempt's start (within timeoutMs): a receiver that never answers frees its slot then"
    },
    "retryDelaysMs": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "integer",
        "minimum": 0
      },
      "default": [
        0,
        1000,
        5000,
        15000
      ],
      "description": "Delays of the delivery attempts"
    },
    "concurrency": {
      "type": "integer",
      "minimum": 1,
      "maximum": 1024,
      "description": "Delivery attempts in flight per worker: tenants take turns for them, a quarter are kept for tenants with none in flight, half at most to one tenant's origin",
      "default": 32
    },
    "retentionDays": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 30,
      "description": "How long delivery logs are kept"
    },
    "testsPerMinute": {
      "type": "integer",
      "minimum": 1,
      "default": 10,
      "description": "Test notifications (POST /webhooks/{id}/test) per API key and minute, per instance; beyond, 429 RATE_LIMITED"
    },
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often deliveries whose queue message was lost are re-queued and expired logs deleted.",
      "default": 30000
    }
  }
};
