/**
 * generated — do not edit. Source: drivers/rabbitmq/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * queue: {type: "rabbitmq"}: RabbitMQ (D3).
 */
export interface RabbitQueueConfig {
  /**
   * amqp:// or amqps:// URL (OPCO_PROXY_QUEUE_URL overrides).
   */
  url: string;
  /**
   * Prefix of the queue names, so several deployments can share one broker
   */
  prefix?: string;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/queue-rabbitmq.schema.json",
  "title": "RabbitQueueConfig",
  "description": "queue: {type: \"rabbitmq\"}: RabbitMQ (D3).",
  "type": "object",
  "required": [
    "url"
  ],
  "properties": {
    "url": {
      "type": "string",
      "pattern": "^amqps?://",
      "description": "amqp:// or amqps:// URL (OPCO_PROXY_QUEUE_URL overrides)."
    },
    "prefix": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_.-]{1,64}$",
      "description": "Prefix of the queue names, so several deployments can share one broker"
    }
  }
};
