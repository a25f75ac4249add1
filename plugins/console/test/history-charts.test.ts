// The History section's charts (ui/history-charts.ts, as esbuild bundles it for the page): which
// charts an answer of GET /admin/history makes, their lines summed across opcoIds where a chart
// is not per opcoId, "no value" kept apart from 0, each upstream body's budget with its rate
// limit, and a chart with nothing counted told apart from one with zeros.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { build } from 'esbuild';
import type { AdminHistory } from '@opco-proxy/schemas';

interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  limit?: boolean;
}
interface ChartModel {
  id: string;
  title: string;
  yLabel: string;
  times: number[];
  series: ChartSeries[];
  empty: string;
}
/** What ui/history-charts.ts exports; typed here because tsc compiles no ui file for Node. */
interface HistoryCharts {
  chartsOf: (history: AdminHistory) => ChartModel[];
  hasData: (chart: ChartModel) => boolean;
  perStep: (seconds: number) => string;
}

const source = fileURLToPath(new URL('../../ui/history-charts.ts', import.meta.url));
const bundle = await build({ entryPoints: [source], bundle: true, write: false, format: 'esm', target: 'es2020' });
const code = Buffer.from(bundle.outputFiles[0].text).toString('base64');
const { chartsOf, hasData, perStep } = (await import(`data:text/javascript;base64,${code}`)) as HistoryCharts;

const TIMES = ['2026-03-02T10:00:00.000Z', '2026-03-02T10:05:00.000Z', '2026-03-02T10:10:00.000Z'];

function history(series: AdminHistory['series'], limits: AdminHistory['limits'] = []): AdminHistory {
  return { since: TIMES[0], until: '2026-03-02T10:15:00.000Z', stepSeconds: 300, times: TIMES, series, limits };
}

const byId = (charts: ChartModel[], id: string) => charts.find((chart) => chart.id === id)!;
const lines = (chart: ChartModel) => chart.series.map((s) => [s.label, s.values]);

t.test('the requests by class, in the order of their classes, 429s named', async (t) => {
  const charts = chartsOf(
    history([
      { name: 'requests', labels: { class: '5xx' }, values: [1, 0, null] },
      { name: 'requests', labels: { class: '429' }, values: [2, 0, null] },
      { name: 'requests', labels: { class: '2xx' }, values: [50, 40, null] },
    ]),
  );
  const requests = byId(charts, 'requests');
  t.same(lines(requests), [
    ['2xx', [50, 40, null]],
    ['5xx', [1, 0, null]],
    ['429 (rate limited)', [2, 0, null]],
  ]);
  t.equal(requests.yLabel, 'answers per 5 minutes', 'what the vertical axis counts, per step');
  t.same(requests.times, [1772445600, 1772445900, 1772446200], 'times in seconds, as uPlot takes them');
  t.not(requests.series[0].color, requests.series[1].color, 'each class its colour');
});

t.test('jobs of every opcoId summed by outcome; no value stays no value', async (t) => {
  const jobs = byId(
    chartsOf(
      history([
        { name: 'jobs', labels: { opcoId: 'akto', outcome: 'failed' }, values: [1, null, null] },
        { name: 'jobs', labels: { opcoId: 'akto', outcome: 'submitted' }, values: [3, null, 0] },
        { name: 'jobs', labels: { opcoId: 'ocapiat', outcome: 'submitted' }, values: [4, 2, null] },
      ]),
    ),
    'jobs',
  );
  t.same(lines(jobs), [
    ['submitted', [7, 2, 0]],
    ['failed', [1, null, null]],
  ]);
});

t.test("each upstream body's calls and budget, with its rate limit per step", async (t) => {
  const charts = chartsOf(
    history(
      [
        { name: 'upstream', labels: { opcoId: 'akto', outcome: 'timeout' }, values: [1, 0, 0] },
        { name: 'upstream', labels: { opcoId: 'akto', outcome: '2xx' }, values: [9, 8, 7] },
        { name: 'budget', labels: { opcoId: 'akto' }, values: [10, 8, 7] },
      ],
      [
        { opcoId: 'akto', perStep: 300 },
        { opcoId: 'idle', perStep: 85.714285 },
      ],
    ),
  );
  t.same(
    charts.map((chart) => chart.id),
    ['requests', 'upstream-akto', 'budget-akto', 'upstream-idle', 'budget-idle', 'jobs', 'deliveries', 'queues'],
    'a pair of charts per configured opcoId',
  );
  t.same(lines(byId(charts, 'upstream-akto')), [
    ['2xx', [9, 8, 7]],
    ['timeout', [1, 0, 0]],
  ]);
  const budget = byId(charts, 'budget-akto');
  t.same(lines(budget), [
    ['admitted', [10, 8, 7]],
    ['rate limit (300)', [300, 300, 300]],
  ]);
  t.ok(budget.series[1].limit, 'the limit drawn as a threshold');
  const idle = byId(charts, 'budget-idle');
  t.equal(idle.series[1].label, 'rate limit (85.7)', 'a limit per step rounded for reading');
  t.notOk(hasData(idle), 'a rate limit alone is no data: the chart says nothing was admitted');
  t.notOk(hasData(byId(charts, 'upstream-idle')), 'nor any call');
});

t.test('a chart with nothing counted, and one with zeros', async (t) => {
  const charts = chartsOf(
    history([
      { name: 'queues', labels: { queue: 'jobs' }, values: [0, 0, 0] },
      { name: 'deliveries', labels: { outcome: 'failed' }, values: [null, null, null] },
    ]),
  );
  t.ok(hasData(byId(charts, 'queues')), 'zeros are values: drawn');
  t.notOk(hasData(byId(charts, 'deliveries')), 'no value at all: not drawn');
  t.notOk(hasData(byId(charts, 'requests')), 'no series: not drawn');
  t.equal(byId(charts, 'deliveries').empty, 'No webhook delivery in this range.');
});

t.test('steps read as words', async (t) => {
  t.same([60, 300, 900, 3600, 7200].map(perStep), ['minute', '5 minutes', '15 minutes', 'hour', '2 hours']);
});
