/**
 * generated — do not edit. Source: drivers/rabbitmq/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * queue: {type: "rabbitmq"}: RabbitMQ (D3).
 */
export interface RabbitQueueConfig {
  /**
   * amqp:// or amqps:// URL (OPCO_PROXY_QUEUE_URL overrides), or a list of the nodes of one cluster: the first that answers is used, the next ones when it goes.
   */
  url: string | [string, ...string[]];
  /**
   * Prefix of the queue names, so several deployments can share one broker
   */
  prefix?: string;
  /**
   * Quorum queues, one per priority level, replicated across the cluster's nodes (docs/decisions.md P17); false: classic queues.
   */
  replicated: boolean;
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
      "anyOf": [
        {
          "type": "string",
          "pattern": "^amqps?://"
        },
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "string",
            "pattern": "^amqps?://"
          }
        }
      ],
      "description": "amqp:// or amqps:// URL (OPCO_PROXY_QUEUE_URL overrides), or a list of the nodes of one cluster: the first that answers is used, the next ones when it goes."
    },
    "prefix": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_.-]{1,64}$",
      "description": "Prefix of the queue names, so several deployments can share one broker"
    },
    "replicated": {
      "type": "boolean",
      "default": false,
      "description": "Quorum queues, one per priority level, replicated across the cluster's nodes (docs/decisions.md P17); false: classic queues."
    }
  }
};
