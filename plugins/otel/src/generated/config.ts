/**
 * generated — do not edit. Source: plugins/otel/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * The opt-in "otel" plugin: a span per upstream call, W3C traceparent propagated upstream, exported over OTLP/HTTP.
 */
export interface OtelConfig {
  /**
   * OTLP/HTTP traces URL (http://collector:4318/v1/traces); without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or http://localhost:4318/v1/traces.
   */
  endpoint?: string;
  /**
   * service.name of the spans (default opco-proxy).
   */
  serviceName: string;
  /**
   * Share of new traces recorded (default 1); a caller's sampled flag is followed.
   */
  sampleRatio: number;
  /**
   * Headers sent to the collector.
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * Longest wait between two exports (default 5000).
   */
  exportDelayMs: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/otel.schema.json",
  "title": "OtelConfig",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "endpoint": {
      "type": "string",
      "pattern": "^https?://",
      "description": "OTLP/HTTP traces URL (http://collector:4318/v1/traces); without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or http://localhost:4318/v1/traces."
    },
    "serviceName": {
      "type": "string",
      "minLength": 1,
      "description": "service.name of the spans (default opco-proxy).",
      "default": "opco-proxy"
    },
    "sampleRatio": {
      "type": "number",
      "minimum": 0,
      "maximum": 1,
      "description": "Share of new traces recorded (default 1); a caller's sampled flag is followed.",
      "default": 1
    },
    "headers": {
      "type": "object",
      "additionalProperties": {
        "type": "string"
      },
      "description": "Headers sent to the collector."
    },
    "exportDelayMs": {
      "type": "integer",
      "minimum": 10,
      "description": "Longest wait between two exports (default 5000).",
      "default": 5000
    }
  },
  "description": "The opt-in \"otel\" plugin: a span per upstream call, W3C traceparent propagated upstream, exported over OTLP/HTTP."
};
