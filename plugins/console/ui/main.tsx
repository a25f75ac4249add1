/**
 * The operator console (P9): asks for the operator key, then shows one section at a time
 * (#jobs, #history, #deliveries, #syncs, #upstreams, #queues, #audit), each reading the operator
 * API; #jobs/{jobId} is one job, opened.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { operatorKey } from './operator-api.js';
import { JobsSection } from './sections/jobs.js';
import { DeliveriesSection } from './sections/deliveries.js';
import { SyncsSection } from './sections/syncs.js';
import { UpstreamsSection } from './sections/upstreams.js';
import { QueuesSection } from './sections/queues.js';
import { AuditSection } from './sections/audit.js';
import { HistorySection } from './sections/history.js';
import { JobPage } from './sections/job.js';

const SECTIONS = {
  jobs: { title: 'Jobs', view: JobsSection },
  history: { title: 'History', view: HistorySection },
  deliveries: { title: 'Deliveries', view: DeliveriesSection },
  syncs: { title: 'Syncs and pollers', view: SyncsSection },
  upstreams: { title: 'Upstreams', view: UpstreamsSection },
  queues: { title: 'Queues', view: QueuesSection },
  audit: { title: 'Audit', view: AuditSection },
} as const;
type SectionName = keyof typeof SECTIONS;

/** `#jobs`, or `#jobs/{jobId}` for one job (under the Jobs section in the navigation). */
function placeOfHash(): { section: SectionName; jobId?: string } {
  const [name, jobId] = location.hash.slice(1).split('/');
  if (name === 'jobs' && jobId) return { section: 'jobs', jobId: decodeURIComponent(jobId) };
  return { section: name in SECTIONS ? (name as SectionName) : 'jobs' };
}

function App() {
  const [hasKey, setHasKey] = useState(operatorKey.get() !== null);
  const [refusal, setRefusal] = useState<string>();
  const [{ section, jobId }, setPlace] = useState(placeOfHash());
  useEffect(() => {
    const follow = () => setPlace(placeOfHash());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);

  const keyRefused = (message: string) => {
    operatorKey.forget();
    setRefusal(message);
    setHasKey(false);
  };
  const View = SECTIONS[section].view;
  return (
    <>
      <header>
        <h1>
          opco-proxy <span class="quiet">operator console</span>
        </h1>
        {hasKey ? (
          <button type="button" class="forget" onClick={() => (operatorKey.forget(), setHasKey(false))}>
            Forget the key
          </button>
        ) : null}
      </header>
      {hasKey ? (
        <>
          <nav aria-label="Sections">
            {Object.entries(SECTIONS).map(([name, { title }]) => (
              <a href={`#${name}`} aria-current={name === section ? 'page' : undefined}>
                {title}
              </a>
            ))}
          </nav>
          <main>
            {jobId ? (
              <JobPage key={jobId} jobId={jobId} onKeyRefused={keyRefused} />
            ) : (
              <View key={section} onKeyRefused={keyRefused} />
            )}
          </main>
        </>
      ) : (
        <KeyForm refusal={refusal} onKey={(key) => (operatorKey.set(key), setRefusal(undefined), setHasKey(true))} />
      )}
    </>
  );
}

function KeyForm({ refusal, onKey }: { refusal: string | undefined; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <main>
      <form
        class="key-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
      >
        <p>
          This console reads every tenant's jobs, deliveries and syncs. It needs the deployment's operator key (
          <code>OPCO_PROXY_ADMIN_KEY</code>; demo mode prints its key at start). The key stays in this tab only.
        </p>
        {refusal ? (
          <p class="problem" role="alert">
            The key was refused: {refusal}
          </p>
        ) : null}
        <label>
          Operator key{' '}
          <input
            type="password"
            name="operator-key"
            autocomplete="off"
            value={key}
            onInput={(event) => setKey((event.target as HTMLInputElement).value)}
          />
        </label>{' '}
        <button type="submit">Open the console</button>
      </form>
    </main>
  );
}

render(<App />, document.getElementById('console')!);
