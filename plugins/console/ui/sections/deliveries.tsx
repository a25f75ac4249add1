/**
 * Webhook deliveries of every tenant (failed ones first of all), with a button that sends one
 * again for its tenant; and the webhooks switched off after days of failures, or failing now.
 */
import { useState } from 'preact/hooks';
import type { AdminDeliveryPage, AdminWebhookPage, DeliveryQueued } from '@opco-proxy/schemas';
import { callAdmin, KeyRefused, withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Choice, Pager, Problem, Status, Table, Tenant, time } from '../display.js';

const STATUSES = ['failed', 'retrying', 'delivered'] as const;
const STATES = ['disabled', 'failing', 'all'] as const;
type Delivery = AdminDeliveryPage['items'][number];

export function DeliveriesSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('failed');
  const [cursor, setCursor] = useState<string>();
  const [state, setState] = useState<(typeof STATES)[number]>('disabled');
  const deliveries = usePolled<AdminDeliveryPage>(withQuery('/admin/deliveries', { status, cursor }), onKeyRefused);
  const webhooks = usePolled<AdminWebhookPage>(withQuery('/admin/webhooks', { state }), onKeyRefused);
  const [sending, setSending] = useState<string>();
  const [notice, setNotice] = useState<string>();
  // Started by a click and not awaited (void below): it reports its own failures in the notice.
  const resend = async (delivery: Delivery) => {
    setSending(delivery.id);
    try {
      const queued = await callAdmin<DeliveryQueued>(
        `/admin/deliveries/${encodeURIComponent(delivery.id)}/resend`,
        'POST',
      );
      setNotice(`Delivery ${queued.deliveryId} (${queued.event}) is on its way again.`);
      deliveries.reload();
    } catch (err) {
      if (err instanceof KeyRefused) onKeyRefused(err.message);
      else setNotice(`Delivery ${delivery.id} was not sent again: ${(err as Error).message}`);
    } finally {
      setSending(undefined);
    }
  };
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Webhook deliveries</h2>
      <Problem message={deliveries.error} />
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Status"
          value={status}
          options={STATUSES}
          onChange={(value) => (setStatus(value), setCursor(undefined))}
        />
      </form>
      <Table
        head={['Created', 'Event', 'Tenant', 'Target', 'Status', 'HTTP', 'Attempts', 'Error', '']}
        numbers={[5, 6]}
        empty="No delivery matches."
      >
        {(deliveries.data?.items ?? []).map((delivery) => (
          <DeliveryRow
            delivery={delivery}
            busy={sending === delivery.id}
            onResend={(delivery) => void resend(delivery)}
          />
        ))}
      </Table>
      <Pager next={deliveries.data?.next} cursor={cursor} onPage={setCursor} />

      <h2 id="webhooks-title">Webhooks in trouble</h2>
      <Problem message={webhooks.error} />
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice label="Show" value={state} options={STATES} onChange={(value) => setState(value)} />
      </form>
      <Table
        head={['Target', 'Tenant', 'Events', 'Active', 'Failing since', 'Disabled', 'Why']}
        empty="No webhook matches."
      >
        {(webhooks.data?.items ?? []).map((webhook) => (
          <tr data-webhook-id={webhook.id}>
            <td>
              <code>{webhook.target}</code>
            </td>
            <td>
              <Tenant hash={webhook.tenant} />
            </td>
            <td>{webhook.events.join(', ')}</td>
            <td>{webhook.active ? 'yes' : <Status value="off" />}</td>
            <td>{time(webhook.failingSince)}</td>
            <td>{time(webhook.disabledAt)}</td>
            <td>{webhook.disabledReason ?? '—'}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function DeliveryRow({
  delivery,
  busy,
  onResend,
}: {
  delivery: Delivery;
  busy: boolean;
  onResend: (delivery: Delivery) => void;
}) {
  const finished = delivery.status === 'failed' || delivery.status === 'delivered';
  return (
    <tr data-delivery-id={delivery.id}>
      <td>{time(delivery.createdAt)}</td>
      <td>{delivery.event}</td>
      <td>
        <Tenant hash={delivery.tenant} />
      </td>
      <td>
        <code>{delivery.target}</code>
      </td>
      <td>
        <Status value={delivery.status} />
      </td>
      <td class="number">{delivery.statusCode ?? '—'}</td>
      <td class="number">{delivery.attempts}</td>
      <td>{delivery.error ?? '—'}</td>
      <td>
        {finished ? (
          <button type="button" disabled={busy} onClick={() => onResend(delivery)}>
            Resend
          </button>
        ) : null}
      </td>
    </tr>
  );
}
