/**
 * generated — do not edit. Source: plugins/hub/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
export interface HubPluginConfig {
  /**
   * The hub's address (ws://hub:8090), or the addresses of two hubs sharing one store (failover): tried in turn, the one that leads accepts (docs/hub.md).
   */
  url:
    | string
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string];
  /**
   * Variable holding this instance's hub key.
   */
  apiKeyEnv: string;
  /**
   * Instances of this instance's fleet (sharing its hub budget); each uses limit/expectedInstances when the hub is unreachable (D12, D30).
   */
  expectedInstances: number;
  /**
   * How long a client GET waits for a hub grant before 429 (D29).
   */
  maxWaitMs: number;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/hub.schema.json",
  "title": "HubPluginConfig",
  "type": "object",
  "required": [
    "url",
    "apiKeyEnv"
  ],
  "additionalProperties": false,
  "properties": {
    "url": {
      "anyOf": [
        {
          "type": "string",
          "pattern": "^(ws|wss|http|https)://"
        },
        {
          "type": "array",
          "minItems": 1,
          "maxItems": 8,
          "items": {
            "type": "string",
            "pattern": "^(ws|wss|http|https)://"
          }
        }
      ],
      "description": "The hub's address (ws://hub:8090), or the addresses of two hubs sharing one store (failover): tried in turn, the one that leads accepts (docs/hub.md)."
    },
    "apiKeyEnv": {
      "type": "string",
      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
      "description": "Variable holding this instance's hub key."
    },
    "expectedInstances": {
      "type": "integer",
      "minimum": 1,
      "description": "Instances of this instance's fleet (sharing its hub budget); each uses limit/expectedInstances when the hub is unreachable (D12, D30).",
      "default": 1
    },
    "maxWaitMs": {
      "type": "integer",
      "minimum": 0,
      "description": "How long a client GET waits for a hub grant before 429 (D29).",
      "default": 30000
    }
  }
};
