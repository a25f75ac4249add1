/**
 * generated — do not edit. Source: plugins/jobs/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
export interface JobsConfig {
  /**
   * Attempts of a job's step before it fails (SPEC 8: 3); the waits between them are backoffMs, the last repeated
   */
  attempts: number;
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
   * What one tenant may keep pending; past it, 429 with Retry-After (issue 38)
   */
  tenantPending?: {
    /**
     * Unfinished jobs per tenant
     */
    jobs: number;
    /**
     * Bytes of the stored files of a tenant's unfinished jobs (2 GiB)
     */
    fileBytes: number;
  };
  /**
   * Share of a worker's prefetch one tenant's jobs may hold at once (at least one job), so another tenant's job always finds a slot (D11, issue 38)
   */
  tenantShare: number;
  /**
   * How long ended jobs are kept
   */
  retentionDays: number;
  /**
   * How long the sealed inputs (key, body, files) of a job failed by an outage (its attempts spent on 429s, timeouts, 5xx) are kept so that an operator can retry it (P23); 0 purges them at failure, as SPEC 3.1 says. A job the upstream refused keeps nothing; uploaded files still go 24 hours after their upload (D17)
   */
  retryWindowHours: number;
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
    "attempts": {
      "type": "integer",
      "minimum": 1,
      "maximum": 20,
      "default": 3,
      "description": "Attempts of a job's step before it fails (SPEC 8: 3); the waits between them are backoffMs, the last repeated"
    },
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
    "tenantPending": {
      "type": "object",
      "additionalProperties": false,
      "description": "What one tenant may keep pending; past it, 429 with Retry-After (issue 38)",
      "properties": {
        "jobs": {
          "type": "integer",
          "minimum": 1,
          "default": 10000,
          "description": "Unfinished jobs per tenant"
        },
        "fileBytes": {
          "type": "integer",
          "minimum": 1,
          "default": 2147483648,
          "description": "Bytes of the stored files of a tenant's unfinished jobs (2 GiB)"
        }
      }
    },
    "tenantShare": {
      "type": "number",
      "exclusiveMinimum": 0,
      "maximum": 1,
      "default": 0.75,
      "description": "Share of a worker's prefetch one tenant's jobs may hold at once (at least one job), so another tenant's job always finds a slot (D11, issue 38)"
    },
    "retentionDays": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 30,
      "description": "How long ended jobs are kept"
    },
    "retryWindowHours": {
      "type": "number",
      "minimum": 0,
      "maximum": 720,
      "default": 24,
      "description": "How long the sealed inputs (key, body, files) of a job failed by an outage (its attempts spent on 429s, timeouts, 5xx) are kept so that an operator can retry it (P23); 0 purges them at failure, as SPEC 3.1 says. A job the upstream refused keeps nothing; uploaded files still go 24 hours after their upload (D17)"
    },
    "sweepIntervalMs": {
      "type": "integer",
      "minimum": 10,
      "description": "How often jobs whose queue message was lost are re-queued and expired records deleted.",
      "default": 60000
    }
  }
};
