/**
 * generated — do not edit. Source: plugins/jobs/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
export interface JobsConfig {
  /**
   * Waits between job attempts
   *
   * @minItems 1
   */
  backoffMs: [number, ...number[]];
  /**
   * How long a worker holds a job without renewing (a dead worker's job is taken over after it)
   */
  leaseMs: number;
  /**
   * Jobs in flight per worker
   */
  prefetch: number;
  /**
   * How long ended jobs are kept
   */
  retentionDays: number;
  /**
   * How often jobs whose queue message was lost are re-queued and expired records deleted.
   */
  sweepIntervalMs: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/jobs.schema.json",
  "title": "JobsConfig",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "backoffMs": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "integer",
        "minimum": 0
      },
      "default": [
        1000,
        2000,
        4000
      ],
      "description": "Waits between job attempts"
    },
    "leaseMs": {
      "type": "integer",
      "minimum": 100,
      "description": "How long a worker holds a job without renewing (a dead worker's job is taken over after it)",
      "default": 30000
    },
    "prefetch": {
      "type": "integer",
      "minimum": 1,
      "maximum": 256,
      "default": 4,
      "description": "Jobs in flight per worker"
    },
    "retentionDays": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 30,
      "description": "How long ended jobs are kept"
    },
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often jobs whose queue message was lost are re-queued and expired records deleted.",
      "default": 60000
    }
  }
};
