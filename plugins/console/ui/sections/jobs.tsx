/**
 * Jobs of every tenant: counts by status per opcoId, then the jobs themselves with their errors,
 * each opening its own page; and the failed ones sent back to pending, many at once.
 */
import { useState } from 'preact/hooks';
import type { AdminJobPage } from '@opco-proxy/schemas';
import { withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Choice, Pager, Problem, Status, Table, Tenant, time } from '../display.js';
import { BulkRetry } from './bulk-retry.js';

const STATUSES = ['', 'pending', 'processing', 'completed', 'failed'] as const;
type Job = AdminJobPage['items'][number]['job'];

export function JobsSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('failed');
  const [opcoId, setOpcoId] = useState('');
  const [cursor, setCursor] = useState<string>();
  const { data, error, reload } = usePolled<AdminJobPage>(
    withQuery('/admin/jobs', { status, opcoId, cursor }),
    onKeyRefused,
  );
  const opcoIds = ['', ...(data?.counts.map((c) => c.opcoId) ?? [])];
  return (
    <section aria-labelledby="jobs-title">
      <h2 id="jobs-title">Jobs</h2>
      <Problem message={error} />
      <Table
        head={['opcoId', 'pending', 'processing', 'completed', 'failed']}
        numbers={[1, 2, 3, 4]}
        empty="No upstream body is configured."
      >
        {(data?.counts ?? []).map((c) => (
          <tr>
            <th scope="row">{c.opcoId}</th>
            <td class="number">{c.pending}</td>
            <td class="number">{c.processing}</td>
            <td class="number">{c.completed}</td>
            <td class={c.failed > 0 ? 'number alarming' : 'number'}>{c.failed}</td>
          </tr>
        ))}
      </Table>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Status"
          value={status}
          options={STATUSES}
          onChange={(value) => (setStatus(value), setCursor(undefined))}
        />
        <Choice
          label="opcoId"
          value={opcoId}
          options={opcoIds}
          onChange={(value) => (setOpcoId(value), setCursor(undefined))}
        />
      </form>
      <Table
        head={['Created', 'opcoId', 'Type', 'Status', 'Tenant', 'Retries', 'Error']}
        numbers={[5]}
        empty="No job matches."
      >
        {(data?.items ?? []).map(({ tenant, job }) => (
          <tr data-job-id={job.jobId}>
            <td>{time(job.createdAt)}</td>
            <td>{job.opcoId}</td>
            <td>
              <a href={`#jobs/${job.jobId}`} title={`Open job ${job.jobId}`}>
                {job.type}
              </a>
            </td>
            <td>
              <Status value={job.status} />
            </td>
            <td>
              <Tenant hash={tenant} />
            </td>
            <td class="number">{job.retries}</td>
            <td>
              <JobError error={job.error} />
            </td>
          </tr>
        ))}
      </Table>
      <Pager next={data?.next} cursor={cursor} onPage={setCursor} />
      <BulkRetry opcoIds={opcoIds.slice(1)} onKeyRefused={onKeyRefused} onRetried={reload} />
    </section>
  );
}

function JobError({ error }: { error: Job['error'] }) {
  if (!error) return <span class="quiet">—</span>;
  return (
    <div class="job-error">
      <strong>{error.code}</strong> {error.message}
      {error.step !== undefined ? <span class="quiet"> (step {error.step})</span> : null}
      {error.upstream !== undefined ? (
        <details>
          <summary>Upstream answer</summary>
          <pre>{JSON.stringify(error.upstream, null, 2)}</pre>
        </details>
      ) : null}
    </div>
  );
}
