/**
 * A service with something for an operator to look at (P9): a failed job with its upstream
 * error, a webhook delivery that failed because its receiver answered 500, a completed sync whose
 * poller now runs, and a sync kept running (slow upstream) with its progress. The operator API
 * test and the console's browser test both start from it.
 */
import { tenantHash } from '@opco-proxy/core';
import { startService, KEY_A, KEY_B, type Reply, type Service, type ServiceOptions } from './harness.js';
import { eventually } from './eventually.js';
import { factureBody, waitForJob } from './jobs-client.js';
import { startReceiver, type Receiver } from './receiver.js';
import { watchSync } from './sync-client.js';
import { COMMON } from './upstream-shapes.js';

export const ADMIN_KEY = 'operator-key-for-tests-0123456789abcdef';
export const TENANT_A = tenantHash(KEY_A);
export const TENANT_B = tenantHash(KEY_B);
/** In the callback URL's query: the receiver's own secret, which operators must not see. */
export const RECEIVER_TOKEN = 'receiver-token-not-for-operators';

export interface OperatorScene {
  service: Service;
  receiver: Receiver;
  /** The failed job (as its tenant sees it). */
  failedJob: any;
  /** The webhook whose delivery failed (with its secret, as created). */
  webhook: any;
  /** The id of the failed delivery (the job.failed notification). */
  deliveryId: string;
  /** The sync kept running; started last. */
  runningSyncId: string;
  /** GET or POST on an operator route with the operator key (or `auth` as the Authorization header). */
  admin: (path: string, options?: { method?: string; auth?: string | null; key?: string }) => Promise<Reply>;
  close(): Promise<void>;
}

/**
 * `slowListeMs`: how long each batch of the running sync takes (one batch at a time, 4 batches),
 * so that it is still running while a test looks at it. `opcos`: more opcoIds in front of the
 * same sandbox, idle until a test uses them (jobs of another upstream body to filter by).
 */
export async function startOperatorScene(
  options: { slowListeMs?: number; opcos?: ServiceOptions['opcos'] } = {},
): Promise<OperatorScene> {
  const receiver = await startReceiver({ status: 500 });
  const service = await startService({
    env: { OPCO_PROXY_ADMIN_KEY: ADMIN_KEY },
    sandbox: { dossierCount: 160 },
    opcos: options.opcos,
    // One attempt per delivery and one batch at a time, so failures and progress show quickly.
    config: { webhooks: { retryDelaysMs: [0] }, jobs: { backoffMs: [50, 50, 50] }, sync: { prefetch: 1 } },
  });
  const close = async () => {
    await service.close();
    await receiver.close();
  };
  try {
    const admin: OperatorScene['admin'] = (path, request = {}) =>
      service.request(request.method ?? 'GET', path, {
        key: request.key ?? null,
        headers: request.auth === null ? {} : { authorization: request.auth ?? `Bearer ${ADMIN_KEY}` },
      });
    const created = await service.request('POST', '/webhooks', {
      body: {
        callbackUrl: `${receiver.url}/hooks/jobs?token=${RECEIVER_TOKEN}`,
        events: ['job.failed', 'job.completed'],
        description: 'CFA back office',
      },
    });
    if (created.status !== 201) throw new Error(`webhook not created: ${created.text}`);
    const webhook = created.body;

    const numero = service.sandbox.dataset.dossiers[0].numeroInterne;
    service.sandbox.faults.add({
      route: `POST ${COMMON.paths.factures}`,
      status: 422,
      body: { message: 'montant incohérent avec le dossier' },
      times: 1,
    });
    const posted = await service.request('POST', '/sandbox/factures', { body: factureBody(numero) });
    const failedJob = await waitForJob(service, posted.body.statusUrl);
    if (failedJob.status !== 'failed') throw new Error(`the job was meant to fail: ${JSON.stringify(failedJob)}`);
    const failed = await eventually(
      async () => (await admin('/admin/deliveries?status=failed')).body.items[0],
      'the job.failed delivery to fail',
      15_000,
    );

    const polled = await service.request('POST', '/sync/dossiers', {
      key: KEY_B,
      body: { opcoId: 'sandbox', enablePoller: true },
    });
    await watchSync(service, polled.body.syncId, { key: KEY_B });
    await eventually(
      async () => (await admin('/admin/pollers')).body.items.length > 0,
      'the poller of the finished sync',
    );

    service.sandbox.faults.add({ route: `GET ${COMMON.paths.liste}$`, latencyMs: options.slowListeMs ?? 2500 });
    const started = await service.request('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
    const runningSyncId = started.body.syncId;
    await watchSync(service, runningSyncId, { until: (sync) => sync.status === 'processing' && sync.totalBatches > 0 });
    return { service, receiver, failedJob, webhook, deliveryId: failed.id, runningSyncId, admin, close };
  } catch (err) {
    await close();
    throw err;
  }
}
