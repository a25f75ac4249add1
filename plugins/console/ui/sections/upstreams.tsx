/** Per upstream body: its rate limit, how much of the budget is used, the hub connection, the last minute of calls. */
import type { AdminUpstreamList } from '@opco-proxy/schemas';
import { usePolled } from '../polled.js';
import { Problem, Status, time } from '../display.js';

type Upstream = AdminUpstreamList['items'][number];

export function UpstreamsSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const { data, error } = usePolled<AdminUpstreamList>('/admin/upstreams', onKeyRefused);
  return (
    <section aria-labelledby="upstreams-title">
      <h2 id="upstreams-title">Upstream budget and hub</h2>
      <Problem message={error} />
      <div class="cards">
        {(data?.items ?? []).map((upstream) => (
          <UpstreamCard upstream={upstream} />
        ))}
      </div>
    </section>
  );
}

function UpstreamCard({ upstream }: { upstream: Upstream }) {
  const { opcoId, adapter, rateLimit, window, admission } = upstream;
  const hub = admission.hub;
  return (
    <article class="card" data-opco-id={opcoId}>
      <h3>
        {opcoId} <span class="quiet">({adapter})</span>
      </h3>
      <dl>
        <dt>Rate limit</dt>
        <dd>
          {rateLimit.limit} calls per {rateLimit.windowMs / 1000} s
        </dd>
        <dt>Budget ({admission.provider})</dt>
        <dd>
          {admission.used === null ? (
            'unknown'
          ) : (
            <>
              <progress
                max={hub ? (hub.mode === 'local' ? hub.localShare : rateLimit.limit) : rateLimit.limit}
                value={admission.used}
                aria-label={`budget used for ${opcoId}`}
              />{' '}
              {admission.used} used{hub ? ' by this instance' : ''}
            </>
          )}
          {admission.waiting ? `, ${admission.waiting} waiting` : ''}
          {admission.nextFreeInMs ? `, next slot in ${Math.ceil(admission.nextFreeInMs / 1000)} s` : ''}
        </dd>
        {admission.unproven ? (
          <>
            <dt>Unproven keys' slice</dt>
            <dd>
              {admission.unproven.used === null ? (
                `${admission.unproven.limit} calls per window, use unknown here`
              ) : (
                <>
                  <progress
                    max={admission.unproven.limit}
                    value={admission.unproven.used}
                    aria-label={`unproven slice used for ${opcoId}`}
                  />{' '}
                  {admission.unproven.used} of {admission.unproven.limit} used by keys the upstream has not accepted yet
                </>
              )}
              {admission.unproven.waiting ? `, ${admission.unproven.waiting} waiting` : ''}
            </dd>
          </>
        ) : null}
        {hub ? (
          <>
            <dt>Hub</dt>
            <dd>
              <Status value={hub.state} />{' '}
              {hub.mode === 'hub' ? 'grants from the hub' : `local bucket of ${hub.localShare} per window`}
              {hub.localOpensAt ? `, local calls from ${time(hub.localOpensAt)}` : ''}
              <br />
              <span class="quiet">instance {hub.instanceId}</span>
            </dd>
          </>
        ) : null}
        <dt>Last 60 s (this instance)</dt>
        <dd>
          calls {window.requests}, errors {window.errors}, 429 answers {window.rateLimited}, average latency{' '}
          {Math.round(window.averageLatencyMs)} ms
        </dd>
      </dl>
    </article>
  );
}
