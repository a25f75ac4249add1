// The console's History section in headless Chromium (issue 42): minutes seeded into the store's
// `history` collection, in the shape every instance's recorder writes them, come back through
// GET /admin/history as charts: each with its title, axis labels and a legend naming the seeded
// series, each series in its colour on the canvas and with its own dash pattern; the chart of a
// series nobody counted says so instead of drawing. SCREENSHOTS=1 also writes
// docs/images/console-history*.png.
import t from 'tap';
import type { Locator } from 'playwright-core';
import { ADMIN_KEY, startService } from '../src/index.js';
import { browserSkip, consoleScreenshot, openChromiumPage } from '../src/browser.js';

const MINUTE = 60_000;

type Point = { series: string; labels: Record<string, string>; value: number };

/**
 * Forty minutes of an instance that served traffic, ending five minutes ago: requests with a 5xx
 * burst and a few 429s, calls to `sandbox` and its budget, jobs, two queues. No webhook delivery.
 */
function seededMinutes(now: number): Array<Record<string, unknown>> {
  const last = Math.floor(now / MINUTE) * MINUTE - 5 * MINUTE;
  return Array.from({ length: 40 }, (_, i) => {
    const minute = new Date(last - (39 - i) * MINUTE);
    const burst = i >= 20 && i < 26;
    const points: Point[] = [
      { series: 'requests', labels: { class: '2xx' }, value: 120 + 30 * Math.sin(i / 4) },
      { series: 'requests', labels: { class: '4xx' }, value: 12 + (i % 5) },
      { series: 'requests', labels: { class: '5xx' }, value: burst ? 60 : 3 },
      { series: 'requests', labels: { class: '429' }, value: burst ? 25 : 0 },
      { series: 'upstream', labels: { opcoId: 'sandbox', outcome: '2xx' }, value: 40 + (i % 7) },
      { series: 'upstream', labels: { opcoId: 'sandbox', outcome: '5xx' }, value: burst ? 18 : 1 },
      { series: 'upstream', labels: { opcoId: 'sandbox', outcome: '429' }, value: burst ? 9 : 0 },
      { series: 'upstream', labels: { opcoId: 'sandbox', outcome: 'timeout' }, value: i % 9 === 0 ? 4 : 0 },
      { series: 'budget', labels: { opcoId: 'sandbox' }, value: 30 + (burst ? 26 : i % 7) },
      { series: 'jobs', labels: { opcoId: 'sandbox', outcome: 'submitted' }, value: 14 + (i % 4) },
      { series: 'jobs', labels: { opcoId: 'sandbox', outcome: 'completed' }, value: 12 + (i % 3) },
      { series: 'jobs', labels: { opcoId: 'sandbox', outcome: 'failed' }, value: burst ? 6 : 1 },
      { series: 'queues', labels: { queue: 'jobs' }, value: 3 + (burst ? 40 : i % 6) },
      { series: 'queues', labels: { queue: 'webhook-deliveries' }, value: 2 + (i % 3) },
    ];
    return {
      _id: `${minute.getTime()}:seeded-instance`,
      minute,
      instance: 'seeded-instance',
      expiresAt: new Date(minute.getTime() + 7 * 24 * 60 * MINUTE),
      points: points.filter((point) => point.value > 0).map((point) => ({ ...point, value: Math.round(point.value) })),
    };
  });
}

/** Canvas pixels painted, and those within a few levels of `rgb` (a series' colour, antialiasing aside). */
function inked(canvas: Locator, rgb: [number, number, number]): Promise<{ painted: number; near: number }> {
  return canvas.evaluate((element: any, [r, g, b]: number[]) => {
    const { data } = element.getContext('2d').getImageData(0, 0, element.width, element.height);
    let painted = 0;
    let near = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] === 0) continue;
      painted++;
      if (Math.abs(data[i] - r) < 24 && Math.abs(data[i + 1] - g) < 24 && Math.abs(data[i + 2] - b) < 24) near++;
    }
    return { painted, near };
  }, rgb);
}

const CHARTS = [
  {
    id: 'requests',
    title: 'Requests by status class',
    y: 'answers per minute',
    legend: ['2xx', '4xx', '5xx', '429 (rate limited)'],
  },
  {
    id: 'upstream-sandbox',
    title: 'Upstream calls to sandbox by outcome',
    y: 'calls per minute',
    legend: ['2xx', '5xx', '429', 'timeout'],
  },
  { id: 'budget-sandbox', title: 'Budget used for sandbox', y: 'calls admitted per minute', legend: ['admitted'] },
  { id: 'jobs', title: 'Jobs by outcome', y: 'jobs per minute', legend: ['submitted', 'completed', 'failed'] },
  {
    id: 'queues',
    title: 'Queue depths',
    y: 'ready messages (most in each minute)',
    legend: ['jobs', 'webhook-deliveries'],
  },
];

t.test('the history charts in Chromium', { skip: browserSkip(t) }, async (t) => {
  const service = await startService({ env: { OPCO_PROXY_ADMIN_KEY: ADMIN_KEY } });
  t.teardown(() => service.close());
  // While it runs, beside the minutes its own recorder writes under its own instance name.
  await service.kernel.store.collection('history').insertMany(seededMinutes(Date.now()) as any);

  const { page, problems } = await openChromiumPage(t);
  await page.goto(`${service.url}/console`);
  await page.getByLabel('Operator key').fill(ADMIN_KEY);
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('link', { name: 'History', exact: true }).click();
  await page.locator('#chart-requests canvas').waitFor();

  for (const chart of CHARTS) {
    const figure = page.locator(`#chart-${chart.id}`);
    await figure.locator('canvas').waitFor();
    t.equal(await figure.getByRole('heading').innerText(), chart.title, `${chart.id}: its title`);
    t.equal(await figure.locator('.y-label').innerText(), chart.y, `${chart.id}: what its vertical axis counts`);
    t.equal(await figure.locator('.x-label').innerText(), 'Time', `${chart.id}: its time axis`);
    const legend = (await figure.locator('.u-legend .u-series th').allInnerTexts()).map((name) => name.trim());
    t.same(
      chart.legend.filter((name) => !legend.includes(name)),
      [],
      `${chart.id}: its legend names every seeded series (${legend.join(', ')})`,
    );
    t.ok((await inked(figure.locator('canvas'), [0, 0, 0])).painted > 0, `${chart.id}: drawn`);
  }
  t.match(
    (await page.locator('#chart-budget-sandbox .u-legend').innerText()).replace(/\s+/g, ' '),
    /rate limit \(\d+\)/,
    "the budget's chart draws the rate limit too",
  );

  // Each seeded class in its colour on the canvas: the lines are drawn from the data, not only the axes.
  const requests = page.locator('#chart-requests canvas');
  const colours: Array<[string, [number, number, number]]> = [
    ['2xx', [0x1b, 0x7f, 0x3b]],
    ['4xx', [0xc7, 0x78, 0x00]],
    ['5xx', [0xb3, 0x26, 0x1e]],
    ['429', [0x7b, 0x3f, 0xa6]],
  ];
  for (const [name, rgb] of colours)
    t.ok((await inked(requests, rgb)).near > 20, `the ${name} line is on the requests chart's canvas`);
  // Not by colour alone: each line of a chart has its own dash pattern, which its legend marker shows.
  const markers = await page
    .locator('#chart-requests .u-legend .u-series .u-marker')
    .evaluateAll((elements: any[]) =>
      elements.map((element) => element.ownerDocument.defaultView.getComputedStyle(element).borderTopStyle),
    );
  t.same(markers.slice(1), ['solid', 'dashed', 'dotted', 'double'], 'each series with its own line style');

  const deliveries = page.locator('#chart-deliveries');
  t.equal(await deliveries.getByRole('heading').innerText(), 'Webhook deliveries by outcome');
  t.equal(
    await deliveries.locator('.empty').innerText(),
    'No webhook delivery in this range.',
    'nothing counted: said',
  );
  t.equal(await deliveries.locator('canvas').count(), 0, 'and not drawn');
  await consoleScreenshot(page, 'history');

  await page.getByLabel('Range').selectOption({ label: 'Last 7 days' });
  await page.locator('#chart-requests .y-label').filter({ hasText: 'answers per hour' }).waitFor();
  t.pass('the last 7 days, a point per hour');
  const weekLegend = await page.locator('#chart-requests .u-legend').innerText();
  t.ok(
    ['2xx', '5xx'].every((name) => weekLegend.includes(name)),
    'the same series over the week',
  );
  t.ok((await inked(requests, [0xb3, 0x26, 0x1e])).near > 0, 'drawn too');
  t.same(problems, [], 'no error in the page (a CSP violation would be one)');
});
