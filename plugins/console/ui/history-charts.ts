/**
 * The history (GET /admin/history) as charts to draw: which charts, with which lines, in which
 * colours, and what their axes count. No DOM here: the page draws these (charts.tsx), and
 * plugins/console/test/history-charts.test.ts checks them in Node.
 */
import type { AdminHistory } from '@opco-proxy/schemas';

export interface ChartSeries {
  label: string;
  /** Aligned with the chart's times; null: nothing reported then (drawn as a gap). */
  values: (number | null)[];
  color: string;
  /** A threshold drawn over the counts (a rate limit): always a dashed line. */
  limit?: boolean;
}

export interface ChartModel {
  /** Also the figure's id, for tests and links: `chart-${id}`. */
  id: string;
  title: string;
  /** What the vertical axis counts, e.g. "requests per minute". */
  yLabel: string;
  /** Seconds since the epoch, oldest first. */
  times: number[];
  series: ChartSeries[];
  /** What to say instead of drawing when no series has a value in the range. */
  empty: string;
}

/** True when some series that is not a threshold has at least one value. */
export function hasData(chart: ChartModel): boolean {
  return chart.series.some((s) => !s.limit && s.values.some((v) => v !== null));
}

/** Colours of the labels that mean something (green is fine, red is not); others take the palette. */
const COLORS: Record<string, string> = {
  '2xx': '#1b7f3b',
  '3xx': '#1f5fbf',
  '4xx': '#c77800',
  '5xx': '#b3261e',
  '429': '#7b3fa6',
  timeout: '#6d4c41',
  network: '#546e7a',
  submitted: '#1f5fbf',
  completed: '#1b7f3b',
  failed: '#b3261e',
  delivered: '#1b7f3b',
  retrying: '#c77800',
};
const PALETTE = ['#1f5fbf', '#1b7f3b', '#b3261e', '#c77800', '#7b3fa6', '#00838f', '#6d4c41', '#546e7a'];

const ORDER = ['2xx', '3xx', '4xx', '5xx', '429', 'timeout', 'network', 'submitted', 'completed', 'failed'];
const ORDER_OF_DELIVERIES = ['delivered', 'retrying', 'failed'];

/** "minute", "5 minutes", "hour", "2 hours". */
export function perStep(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : `${seconds / 3600} hours`;
  return seconds === 60 ? 'minute' : `${Math.round(seconds / 60)} minutes`;
}

export function chartsOf(history: AdminHistory): ChartModel[] {
  const times = history.times.map((t) => Date.parse(t) / 1000);
  const per = perStep(history.stepSeconds);
  const of = (name: AdminHistory['series'][number]['name']) => history.series.filter((s) => s.name === name);
  const opcoIds = [
    ...new Set([...history.limits.map((l) => l.opcoId), ...of('upstream').map((s) => s.labels.opcoId ?? '')]),
  ]
    .filter(Boolean)
    .sort();
  const charts: ChartModel[] = [
    {
      id: 'requests',
      title: 'Requests by status class',
      yLabel: `answers per ${per}`,
      times,
      series: byLabel(of('requests'), 'class', ORDER, (c) => (c === '429' ? '429 (rate limited)' : c)),
      empty: 'No request in this range.',
    },
  ];
  for (const opcoId of opcoIds) {
    const upstream = of('upstream').filter((s) => s.labels.opcoId === opcoId);
    const limit = history.limits.find((l) => l.opcoId === opcoId);
    const used = sum(
      of('budget').filter((s) => s.labels.opcoId === opcoId),
      times.length,
    );
    charts.push(
      {
        id: `upstream-${opcoId}`,
        title: `Upstream calls to ${opcoId} by outcome`,
        yLabel: `calls per ${per}`,
        times,
        series: byLabel(upstream, 'outcome', ORDER),
        empty: `No call to ${opcoId} in this range.`,
      },
      {
        id: `budget-${opcoId}`,
        title: `Budget used for ${opcoId}`,
        yLabel: `calls admitted per ${per}`,
        times,
        series: [
          { label: 'admitted', values: used, color: '#1f5fbf' },
          ...(limit
            ? [
                {
                  label: `rate limit (${Number(limit.perStep.toFixed(1))})`,
                  values: times.map(() => limit.perStep),
                  color: '#b3261e',
                  limit: true,
                },
              ]
            : []),
        ],
        empty: `No call to ${opcoId} was admitted in this range.`,
      },
    );
  }
  charts.push(
    {
      id: 'jobs',
      title: 'Jobs by outcome',
      yLabel: `jobs per ${per}`,
      times,
      series: byLabel(of('jobs'), 'outcome', ORDER),
      empty: 'No job was submitted or finished in this range.',
    },
    {
      id: 'deliveries',
      title: 'Webhook deliveries by outcome',
      yLabel: `deliveries per ${per}`,
      times,
      series: byLabel(of('deliveries'), 'outcome', ORDER_OF_DELIVERIES),
      empty: 'No webhook delivery in this range.',
    },
    {
      id: 'queues',
      title: 'Queue depths',
      yLabel: `ready messages (most in each ${per})`,
      times,
      series: byLabel(of('queues'), 'queue', []),
      empty: 'No queue depth was reported in this range.',
    },
  );
  return charts;
}

/**
 * One line per value of `label` (per status class, outcome, queue), the series that share it
 * summed (jobs of every opcoId); in `order`, then the others alphabetically.
 */
function byLabel(
  series: AdminHistory['series'],
  label: string,
  order: readonly string[],
  name: (value: string) => string = (value) => value,
): ChartSeries[] {
  const values = [...new Set(series.map((s) => s.labels[label] ?? ''))].sort((a, b) => {
    const [i, j] = [order.indexOf(a), order.indexOf(b)];
    if (i !== j) return (i < 0 ? order.length : i) - (j < 0 ? order.length : j);
    return a.localeCompare(b);
  });
  const length = series[0]?.values.length ?? 0;
  return values.map((value, index) => ({
    label: name(value || '(none)'),
    values: sum(
      series.filter((s) => (s.labels[label] ?? '') === value),
      length,
    ),
    color: COLORS[value] ?? PALETTE[index % PALETTE.length],
  }));
}

/** Point by point; null where none of them has a value. */
function sum(series: AdminHistory['series'], length: number): (number | null)[] {
  const total: (number | null)[] = Array.from({ length }, () => null);
  for (const s of series)
    s.values.forEach((value, i) => {
      if (value !== null) total[i] = (total[i] ?? 0) + value;
    });
  return total;
}
