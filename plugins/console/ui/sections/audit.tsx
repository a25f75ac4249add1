/**
 * Audit records of every tenant and operator (D32): who did what to which job, webhook,
 * delivery or sync, and how it ended; filtered by tenant hash, actor, action and time.
 */
import { useState } from 'preact/hooks';
import type { AuditPage } from '@opco-proxy/schemas';
import { withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Choice, Pager, Problem, Status, Table, Tenant, time } from '../display.js';

const ACTORS = ['', 'tenant', 'operator'] as const;
type Record = AuditPage['items'][number];

export function AuditSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const [actor, setActor] = useState<(typeof ACTORS)[number]>('');
  const [tenant, setTenant] = useState('');
  const [action, setAction] = useState('');
  const [since, setSince] = useState('');
  const [cursor, setCursor] = useState<string>();
  // A half-typed hash or date is not sent: the API would answer 400 until it is whole.
  const query = {
    actor,
    tenant: /^[0-9a-f]{64}$/.test(tenant) ? tenant : undefined,
    action: /^[A-Za-z]{1,64}$/.test(action) ? action : undefined,
    since: since ? new Date(since).toISOString() : undefined,
    cursor,
  };
  const { data, error } = usePolled<AuditPage>(withQuery('/admin/audit', query), onKeyRefused);
  const refilter =
    <T extends string>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setCursor(undefined);
    };
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit</h2>
      <Problem message={error} />
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice label="Actor" value={actor} options={ACTORS} onChange={refilter<(typeof ACTORS)[number]>(setActor)} />
        <label class="choice">
          Tenant{' '}
          <input
            name="tenant"
            placeholder="tenant hash"
            size={24}
            value={tenant}
            onInput={(e) => refilter(setTenant)((e.target as HTMLInputElement).value.trim())}
          />
        </label>
        <label class="choice">
          Action{' '}
          <input
            name="action"
            placeholder="e.g. postDossier"
            size={18}
            value={action}
            onInput={(e) => refilter(setAction)((e.target as HTMLInputElement).value.trim())}
          />
        </label>
        <label class="choice">
          Since{' '}
          <input
            name="since"
            type="datetime-local"
            value={since}
            onInput={(e) => refilter(setSince)((e.target as HTMLInputElement).value)}
          />
        </label>
      </form>
      <Table
        head={['At', 'Actor', 'Tenant', 'Action', 'opcoId', 'Targets', 'Outcome', 'Request id', 'Address']}
        empty="No audit record matches."
      >
        {(data?.items ?? []).map((record) => (
          <tr data-audit-id={record.id}>
            <td>{time(record.at)}</td>
            <td>{record.actor}</td>
            <td>{record.tenant ? <Tenant hash={record.tenant} /> : <span class="quiet">—</span>}</td>
            <td>
              <code>{record.action}</code>
            </td>
            <td>{record.opcoId ?? ''}</td>
            <td>
              <Targets targets={record.targets} />
            </td>
            <td>
              <Outcome outcome={record.outcome} />
            </td>
            <td>
              <code>{record.requestId}</code>
            </td>
            <td>{record.clientAddress}</td>
          </tr>
        ))}
      </Table>
      <Pager next={data?.next} cursor={cursor} onPage={setCursor} />
    </section>
  );
}

function Targets({ targets }: { targets: Record['targets'] }) {
  const entries = Object.entries(targets);
  if (entries.length === 0) return <span class="quiet">—</span>;
  return (
    <>
      {entries.map(([name, id]) => (
        <div>
          <span class="quiet">{name}</span> <code title={id}>{id.slice(0, 13)}</code>
        </div>
      ))}
    </>
  );
}

export function Outcome({ outcome }: { outcome: Record['outcome'] }) {
  const word = outcome.status >= 400 ? 'failed' : 'completed';
  return (
    <>
      <Status value={word} /> {outcome.status}
      {outcome.code ? ` ${outcome.code}` : ''}
      {outcome.idempotency === 'duplicate' ? ' (duplicate)' : ''}
    </>
  );
}
