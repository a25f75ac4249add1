/**
 * One job of any tenant, opened from the Jobs section (#jobs/{jobId}, issue 42): what it is, its
 * steps and their attempts, its error with the upstream's answer, whether it can still be retried
 * (a button that does it), and its audit records. The upstream's answer is shown as JSON text:
 * it comes from outside and is never read as HTML.
 */
import { useState } from 'preact/hooks';
import type { AdminJob, AsyncAccepted, AuditPage } from '@opco-proxy/schemas';
import { callAdmin, KeyRefused, withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Problem, Status, Table, time } from '../display.js';
import { Outcome } from './audit.js';

export function JobPage({ jobId, onKeyRefused }: { jobId: string; onKeyRefused: (message: string) => void }) {
  const opened = usePolled<AdminJob>(`/admin/jobs/${encodeURIComponent(jobId)}`, onKeyRefused);
  const audit = usePolled<AuditPage>(withQuery('/admin/audit', { jobId }), onKeyRefused);
  const data = opened.data;
  return (
    <section aria-labelledby="job-title">
      <p>
        <a href="#jobs">← All jobs</a>
      </p>
      <h2 id="job-title">
        Job <code>{jobId}</code> {data ? <Status value={data.job.status} /> : null}
      </h2>
      <Problem message={opened.error} />
      {data ? (
        <>
          <JobFacts opened={data} />
          <JobErrorDetail error={data.job.error} />
          <RetryPanel opened={data} onKeyRefused={onKeyRefused} onRetried={() => (opened.reload(), audit.reload())} />
          <h3>Steps</h3>
          <Table head={['Step', 'Name', 'Status', 'Attempts', 'Uncertain']} numbers={[0, 3]} empty="No step.">
            {data.steps.map((step) => (
              <tr data-step={step.step}>
                <td class="number">{step.step}</td>
                <td>{step.name}</td>
                <td>
                  <Status value={step.status} />
                </td>
                <td class="number">{step.attempts}</td>
                <td>{step.uncertain ? 'yes: its last call may have reached the upstream unanswered' : 'no'}</td>
              </tr>
            ))}
          </Table>
        </>
      ) : null}
      <h3 id="job-audit-title">Audit records</h3>
      <Problem message={audit.error} />
      <Table head={['At', 'Actor', 'Action', 'Outcome', 'Request id']} empty="No audit record about this job.">
        {(audit.data?.items ?? []).map((record) => (
          <tr data-audit-id={record.id}>
            <td>{time(record.at)}</td>
            <td>{record.actor}</td>
            <td>
              <code>{record.action}</code>
            </td>
            <td>
              <Outcome outcome={record.outcome} />
            </td>
            <td>
              <code>{record.requestId}</code>
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function JobFacts({ opened }: { opened: AdminJob }) {
  const { job, tenant } = opened;
  return (
    <dl class="facts">
      <dt>Type</dt>
      <dd>{job.type}</dd>
      <dt>opcoId</dt>
      <dd>{job.opcoId}</dd>
      <dt>Tenant</dt>
      <dd>
        <code class="tenant">{tenant}</code>
      </dd>
      <dt>Created</dt>
      <dd>{time(job.createdAt)}</dd>
      <dt>Started</dt>
      <dd>{time(job.startedAt)}</dd>
      <dt>Completed</dt>
      <dd>{time(job.completedAt)}</dd>
      <dt>Retries</dt>
      <dd>
        {job.retries}
        {opened.operatorRetries ? ` (sent back to pending by operators ${opened.operatorRetries} times)` : ''}
      </dd>
    </dl>
  );
}

function JobErrorDetail({ error }: { error: AdminJob['job']['error'] }) {
  if (!error) return null;
  return (
    <section class="error-detail" aria-labelledby="job-error-title">
      <h3 id="job-error-title">Error</h3>
      <p>
        <strong>{error.code}</strong> {error.message}
        {error.step !== undefined ? <span class="quiet"> (step {error.step})</span> : null}
      </p>
      {error.upstream !== undefined ? (
        <>
          <h4>The upstream's answer</h4>
          <pre class="upstream-answer">{JSON.stringify(error.upstream, null, 2)}</pre>
        </>
      ) : (
        <p class="quiet">The upstream gave no answer.</p>
      )}
    </section>
  );
}

function RetryPanel({
  opened,
  onKeyRefused,
  onRetried,
}: {
  opened: AdminJob;
  onKeyRefused: (message: string) => void;
  onRetried: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const { job, retry } = opened;
  // Started by a click and not awaited (void below): it reports its own failure on the page.
  const send = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      const accepted = await callAdmin<AsyncAccepted>(`/admin/jobs/${encodeURIComponent(job.jobId)}/retry`, 'POST');
      setNotice(
        `The job is ${accepted.status} again: the workers take it up (its tenant reads ${accepted.statusUrl}).`,
      );
      onRetried();
    } catch (err) {
      if (err instanceof KeyRefused) onKeyRefused(err.message);
      else setProblem(`The job was not retried: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="retry">
      <h3>Retry</h3>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <Problem message={problem} />
      <p>
        {job.status !== 'failed'
          ? 'Only a failed job can be retried.'
          : retry.possible
            ? `It can be retried${retry.until ? ` until ${time(retry.until)}, when its sealed inputs are purged` : ''}.`
            : `It can no longer be retried${retry.reason ? `: ${retry.reason}` : ''}.`}
      </p>
      {job.status === 'failed' && retry.possible ? (
        <button type="button" disabled={busy} onClick={() => void send()}>
          Retry
        </button>
      ) : null}
    </div>
  );
}
