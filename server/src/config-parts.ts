/**
 * The configuration sections of what this application ships (issue 29): each plugin's and
 * driver's own schema, defaults included, read from its package. Start-up validates the file once
 * against the kernel's schema with these put in; `npm run generate -w @opco-proxy/server` writes
 * the same assembly to schemas/json/config.schema.json and docs/configuration.md.
 */
import type { ConfigParts } from '@opco-proxy/core/application';
import { CONFIG_SCHEMA as cache } from '@opco-proxy/plugin-cache/config';
import { CONFIG_SCHEMA as jobs } from '@opco-proxy/plugin-jobs/config';
import { CONFIG_SCHEMA as webhooks } from '@opco-proxy/plugin-webhooks/config';
import { CONFIG_SCHEMA as sync } from '@opco-proxy/plugin-sync/config';
import { CONFIG_SCHEMA as hub } from '@opco-proxy/plugin-hub/config';
import { CONFIG_SCHEMA as otel } from '@opco-proxy/plugin-otel/config';
import { CONFIG_SCHEMA as mongodb } from '@opco-proxy/driver-mongodb/config';
import { CONFIG_SCHEMA as rabbitmq } from '@opco-proxy/driver-rabbitmq/config';

/** Feature plugins enabled when the config names none (D3: all but hub and otel). */
export const DEFAULT_PLUGINS = ['cache', 'jobs', 'webhooks', 'sync', 'console'] as const;

export const CONFIG_PARTS: ConfigParts = {
  sections: [
    { key: 'cache', schema: cache },
    { key: 'jobs', schema: jobs },
    { key: 'webhooks', schema: webhooks },
    { key: 'sync', schema: sync },
    { key: 'hub', schema: hub },
    { key: 'otel', schema: otel },
  ],
  drivers: [
    { port: 'store', type: 'mongodb', schema: mongodb },
    { port: 'queue', type: 'rabbitmq', schema: rabbitmq },
  ],
  defaultPlugins: DEFAULT_PLUGINS,
};
