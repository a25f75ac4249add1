/**
 * generated — do not edit. Source: plugins/webhooks/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
export interface WebhooksConfig {
  /**
   * Delivery time limit
   */
  timeoutMs: number;
  /**
   * Delays of the delivery attempts
   *
   * @minItems 1
   */
  retryDelaysMs: [number, ...number[]];
  /**
   * Deliveries in flight per worker
   */
  concurrency: number;
  /**
   * How long delivery logs are kept
   */
  retentionDays: number;
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
      "description": "Delivery time limit"
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
      "description": "Deliveries in flight per worker",
      "default": 16
    },
    "retentionDays": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 30,
      "description": "How long delivery logs are kept"
    },
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often deliveries whose queue message was lost are re-queued and expired logs deleted.",
      "default": 30000
    }
  }
};
