/**
 * The sync plugin's operator routes (P9): every tenant's syncs with their progress, and every
 * poller. The API keys sealed on these records never leave them.
 */
import type { PluginApi } from '@opco-proxy/core';
import { toResource, type SyncRecords } from './sync-records.js';
import { toPollerResource, type Pollers } from './pollers.js';

/** More pollers than this is a deployment to look at with its store's own tools. */
const MAX_POLLERS_SHOWN = 1000;

export function mountOperatorRoutes(api: PluginApi<unknown>, deps: { records: SyncRecords; pollers: Pollers }): void {
  api.route('listAdminSyncs', async ({ query }) => {
    const page = await deps.records.pageAll(query.status ?? 'running', {
      limit: query.limit ? Number(query.limit) : 50,
      cursor: query.cursor,
    });
    return {
      status: 200,
      body: {
        items: page.records.map((sync) => ({ tenant: sync.tenant, sync: toResource(sync) })),
        next: page.next ?? null,
      },
    };
  });

  api.route('listAdminPollers', async () => ({
    status: 200,
    body: {
      items: (await deps.pollers.listAll(MAX_POLLERS_SHOWN)).map((poller) => ({
        tenant: poller.tenant,
        poller: toPollerResource(poller),
      })),
    },
  }));
}
