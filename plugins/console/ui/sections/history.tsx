/**
 * What every instance counted, minute by minute (GET /admin/history, issue 42), over the last
 * hour, 6 hours, day or week: requests and errors, each upstream body's calls and budget against
 * its rate limit, jobs, webhook deliveries, queue depths.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { withQuery } from '../operator-api.js';
import { usePolled } from '../polled.js';
import { Problem } from '../display.js';
import { Chart } from '../charts.js';
import { chartsOf, perStep } from '../history-charts.js';
import type { AdminHistory } from '@opco-proxy/schemas';

const MINUTE = 60_000;

/** Each range with a step that gives a few dozen to a few hundred points (a line per pixel or two). */
const RANGES = {
  hour: { label: 'Last hour', minutes: 60, stepSeconds: 60 },
  '6h': { label: 'Last 6 hours', minutes: 360, stepSeconds: 300 },
  day: { label: 'Last 24 hours', minutes: 1440, stepSeconds: 900 },
  week: { label: 'Last 7 days', minutes: 10080, stepSeconds: 3600 },
} as const;
type Range = keyof typeof RANGES;

export function HistorySection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const [range, setRange] = useState<Range>('hour');
  const [serverNow, setServerNow] = useState<string>();
  const minute = useServerMinute(serverNow);
  const { minutes, stepSeconds } = RANGES[range];
  // Two minutes short of the whole range: the oldest minute asked for stays within the
  // retention (the week) however stale this minute or late the request.
  const since = new Date(minute - (minutes - 2) * MINUTE).toISOString();
  const { data, error } = usePolled<AdminHistory>(
    withQuery('/admin/history', { since, step: String(stepSeconds) }),
    onKeyRefused,
    30_000,
  );
  useEffect(() => setServerNow(data?.until), [data]);
  const charts = useMemo(() => (data ? chartsOf(data) : []), [data]);
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <Problem message={error} />
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label class="choice">
          Range{' '}
          <select value={range} onChange={(event) => setRange((event.target as HTMLSelectElement).value as Range)}>
            {Object.entries(RANGES).map(([value, { label }]) => (
              <option value={value}>{label}</option>
            ))}
          </select>
        </label>
        {data ? (
          <span class="quiet">
            one point per {perStep(data.stepSeconds)}, summed over every instance; a gap: no instance reported
          </span>
        ) : null}
      </form>
      <div class="charts">
        {charts.map((chart) => (
          <Chart key={chart.id} chart={chart} />
        ))}
      </div>
    </section>
  );
}

/**
 * The start of the service's current minute, moving on with the clock. The service's clock, not
 * this browser's: `serverNow` (the last answer's `until`) tells how far apart they are, and a
 * range reaching back to the retention's edge must be measured on the service's.
 */
function useServerMinute(serverNow: string | undefined): number {
  const offset = useRef(0);
  const read = () => Math.floor((Date.now() + offset.current) / MINUTE) * MINUTE;
  const [minute, setMinute] = useState(read);
  useEffect(() => {
    if (serverNow) offset.current = Date.parse(serverNow) - Date.now();
  }, [serverNow]);
  useEffect(() => {
    const timer = setInterval(() => setMinute(read()), 10_000);
    return () => clearInterval(timer);
  }, []);
  return minute;
}
