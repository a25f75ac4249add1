/** Bulk syncs of every tenant with their progress (running ones first of all), and every poller. */
import { useState } from 'preact/hooks';
import type { AdminPollerList, AdminSyncPage } from '@opco-proxy/schemas';
import { withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Choice, Pager, Problem, Status, Table, Tenant, time } from '../display.js';

const STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;

export function SyncsSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('running');
  const [cursor, setCursor] = useState<string>();
  const syncs = usePolled<AdminSyncPage>(withQuery('/admin/syncs', { status, cursor }), onKeyRefused);
  const pollers = usePolled<AdminPollerList>('/admin/pollers', onKeyRefused);
  return (
    <section aria-labelledby="syncs-title">
      <h2 id="syncs-title">Syncs</h2>
      <Problem message={syncs.error} />
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Status"
          value={status}
          options={STATUSES}
          onChange={(value) => (setStatus(value), setCursor(undefined))}
        />
      </form>
      <Table
        head={['Started', 'opcoId', 'Tenant', 'Status', 'Progress', 'Batches', 'Dossiers', 'Expected end', 'Error']}
        numbers={[5, 6]}
        empty="No sync matches."
      >
        {(syncs.data?.items ?? []).map(({ tenant, sync }) => (
          <tr data-sync-id={sync.syncId}>
            <td>{time(sync.startedAt)}</td>
            <td>{sync.opcoId}</td>
            <td>
              <Tenant hash={tenant} />
            </td>
            <td>
              <Status value={sync.status} />
            </td>
            <td class="progress">
              <progress max={1} value={sync.progress} aria-label={`progress of sync ${sync.syncId}`} />
              <span class="number">{Math.round(sync.progress * 100)} %</span>
            </td>
            <td class="number">
              {sync.batchesCompleted} / {sync.totalBatches}
            </td>
            <td class="number">
              {sync.fetched} / {sync.total}
            </td>
            <td>{time(sync.estimatedEnd)}</td>
            <td>{sync.error ?? '—'}</td>
          </tr>
        ))}
      </Table>
      <Pager next={syncs.data?.next} cursor={cursor} onPage={setCursor} />

      <h2 id="pollers-title">Pollers</h2>
      <Problem message={pollers.error} />
      <Table
        head={['opcoId', 'Tenant', 'Status', 'Every', 'Last poll', 'Next poll', 'Last error']}
        numbers={[3]}
        empty="No poller runs."
      >
        {(pollers.data?.items ?? []).map(({ tenant, poller }) => (
          <tr>
            <td>{poller.opcoId}</td>
            <td>
              <Tenant hash={tenant} />
            </td>
            <td>
              <Status value={poller.status} />
            </td>
            <td class="number">{Math.round(poller.intervalMs / 1000)} s</td>
            <td>{time(poller.lastPollAt)}</td>
            <td>{time(poller.nextPollAt)}</td>
            <td>{poller.lastError ?? '—'}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
