/**
 * Sends every failed job matching a filter back to pending (POST /admin/jobs/retry, issue 42):
 * first counted (dryRun) and shown as a question, then done only once the operator confirms that
 * very filter on the page. A job whose sealed inputs were purged cannot be retried: the question
 * says how many, so nobody expects them back.
 */
import { useState } from 'preact/hooks';
import { callAdmin, KeyRefused } from '../operator-api.js';
import { Choice, Problem } from '../display.js';
import type { AdminJobRetried, AdminJobRetryBody } from '@opco-proxy/schemas';

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export function BulkRetry({
  opcoIds,
  onKeyRefused,
  onRetried,
}: {
  opcoIds: string[];
  onKeyRefused: (message: string) => void;
  onRetried: () => void;
}) {
  const [opcoId, setOpcoId] = useState('');
  const [code, setCode] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [asked, setAsked] = useState<{ filter: AdminJobRetryBody; count: AdminJobRetried }>();
  const [done, setDone] = useState<AdminJobRetried>();
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const filter: AdminJobRetryBody = {
    ...(opcoId && { opcoId }),
    ...(code && { code }),
    ...(since && { failedSince: new Date(since).toISOString() }),
    ...(until && { failedUntil: new Date(until).toISOString() }),
  };
  // A filter changed after its count was shown is not the one confirmed: ask again.
  const refilter = (set: (value: string) => void) => (value: string) => (set(value), setAsked(undefined));

  // Both started by a click and not awaited (void below): they report their failures on the page.
  const call = async (body: AdminJobRetryBody, then: (answer: AdminJobRetried) => void) => {
    setBusy(true);
    setProblem(undefined);
    try {
      then(await callAdmin<AdminJobRetried>('/admin/jobs/retry', 'POST', body));
    } catch (err) {
      if (err instanceof KeyRefused) onKeyRefused(err.message);
      else setProblem(`No job was retried: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const count = () =>
    call({ ...filter, dryRun: true }, (answer) => (setAsked({ filter, count: answer }), setDone(undefined)));
  const confirm = (confirmed: AdminJobRetryBody) =>
    call(confirmed, (answer) => (setAsked(undefined), setDone(answer), onRetried()));

  return (
    <section class="bulk-retry" aria-labelledby="bulk-retry-title">
      <h3 id="bulk-retry-title">Retry failed jobs</h3>
      <form class="filters" onSubmit={(event) => (event.preventDefault(), void count())}>
        <Choice label="opcoId to retry" value={opcoId} options={['', ...opcoIds]} onChange={refilter(setOpcoId)} />
        <label class="choice">
          Error code{' '}
          <input
            name="code"
            placeholder="e.g. UPSTREAM_ERROR"
            size={22}
            pattern="[A-Z_]{1,64}"
            value={code}
            onInput={(e) => refilter(setCode)((e.target as HTMLInputElement).value.trim().toUpperCase())}
          />
        </label>
        <label class="choice">
          Failed since{' '}
          <input
            name="failed-since"
            type="datetime-local"
            value={since}
            onInput={(e) => refilter(setSince)((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="choice">
          until{' '}
          <input
            name="failed-until"
            type="datetime-local"
            value={until}
            onInput={(e) => refilter(setUntil)((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Count matching jobs
        </button>
      </form>
      <Problem message={problem} />
      {asked ? (
        <Question
          asked={asked.count}
          busy={busy}
          onConfirm={() => void confirm(asked.filter)}
          onCancel={() => setAsked(undefined)}
        />
      ) : null}
      {done ? <Retried done={done} /> : null}
    </section>
  );
}

function Question({
  asked,
  busy,
  onConfirm,
  onCancel,
}: {
  asked: AdminJobRetried;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const purged = asked.notRetryable
    ? ` (${asked.notRetryable} can no longer be retried: their inputs were purged)`
    : '';
  if (asked.retried === 0)
    return (
      <p class="confirmation" role="status">
        No failed job matches that can be retried{purged}.
      </p>
    );
  return (
    <div class="confirmation" role="alertdialog" aria-labelledby="bulk-retry-question">
      <p id="bulk-retry-question">
        Retry {plural(asked.retried, 'failed job')}?{purged}
        {asked.more ? ' More jobs match than one request retries: ask again afterwards for the rest.' : ''}
      </p>
      <button type="button" disabled={busy} onClick={onConfirm}>
        Retry {plural(asked.retried, 'job')}
      </button>{' '}
      <button type="button" disabled={busy} onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

function Retried({ done }: { done: AdminJobRetried }) {
  return (
    <div class="notice" role="status">
      <p>
        {plural(done.retried, 'job')} sent back to pending
        {done.notRetryable ? `; ${done.notRetryable} could not be retried (their inputs were purged)` : ''}
        {done.more ? '; more jobs match: count them again for the rest' : ''}.
      </p>
      {done.jobIds.length > 0 ? (
        <ul class="retried-jobs">
          {done.jobIds.map((jobId) => (
            <li>
              <a href={`#jobs/${jobId}`}>
                <code>{jobId}</code>
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
