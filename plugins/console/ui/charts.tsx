/**
 * A time-series chart drawn by uPlot (canvas, no dependency, bundled with the page: nothing is
 * fetched and nothing inline is needed, so it works under the console's CSP). The title and the
 * axis labels are page text around the canvas, not pixels in it, so that screen readers and
 * searches find them; uPlot's legend is a table naming each series. Series differ by dash pattern
 * as well as by colour, and the legend's marker repeats the pattern, so no reader needs colours.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { hasData, type ChartModel } from './history-charts.js';

/** A line's look: the canvas dash pattern, and the CSS border style of its legend marker. */
interface LineStyle {
  dash: number[];
  marker: string;
  width: number;
}

const LINE_STYLES: LineStyle[] = [
  { dash: [], marker: 'solid', width: 2 },
  { dash: [10, 5], marker: 'dashed', width: 2 },
  { dash: [2, 4], marker: 'dotted', width: 3 },
  { dash: [14, 4, 3, 4], marker: 'double', width: 2 },
  { dash: [22, 6], marker: 'dashed', width: 3 },
  { dash: [3, 3, 3, 9], marker: 'dotted', width: 2 },
];

const HEIGHT = 220;

export function Chart({ chart }: { chart: ChartModel }) {
  const drawn = hasData(chart);
  return (
    <figure class="chart" id={`chart-${chart.id}`} aria-labelledby={`chart-${chart.id}-title`}>
      <h3 id={`chart-${chart.id}-title`}>{chart.title}</h3>
      {drawn ? <Plot chart={chart} /> : <p class="empty">{chart.empty}</p>}
    </figure>
  );
}

function Plot({ chart }: { chart: ChartModel }) {
  const box = useRef<HTMLDivElement>(null);
  const legendBox = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  // A new set of series (or axis) needs a new plot; new values for the same series only new data.
  const shape = [chart.yLabel, ...chart.series.map((s) => `${s.label}:${s.color}`)].join('\n');
  const data = () => [chart.times, ...chart.series.map((s) => s.values)] as uPlot.AlignedData;

  useEffect(() => {
    const element = box.current!;
    const styles = chart.series.map((s, i) => (s.limit ? LIMIT_STYLE : LINE_STYLES[i % LINE_STYLES.length]));
    const created = new uPlot(
      {
        width: Math.max(element.clientWidth, 240),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          { stroke: '#5d6878', grid: { stroke: '#eef1f5' } },
          { stroke: '#5d6878', grid: { stroke: '#eef1f5' } },
        ],
        series: [
          { label: 'Time' },
          ...chart.series.map((s, i) => ({
            label: s.label,
            stroke: s.color,
            width: styles[i].width,
            dash: styles[i].dash,
            spanGaps: false,
            // uPlot shows points where they are sparse; elsewhere a value between two gaps would
            // draw no line at all, so it gets its point.
            points: {
              fill: s.color,
              filter: (u: uPlot, index: number, shown: boolean) => (shown ? null : isolated(u.data[index])),
            },
          })),
        ],
        // Below the time axis's label, not between the canvas and it.
        legend: {
          mount: (_u: uPlot, table: HTMLElement) => legendBox.current!.appendChild(table),
          markers: { width: 3, dash: (_u: uPlot, index: number) => styles[index - 1]?.marker ?? 'solid' },
        },
        cursor: { drag: { x: false, y: false } },
      },
      data(),
      element,
    );
    plot.current = created;
    // Only a new width redraws: the plot's own height change must not call the observer back forever.
    const follow = new ResizeObserver(() => {
      const width = Math.max(element.clientWidth, 240);
      if (width !== created.width) created.setSize({ width, height: HEIGHT });
    });
    follow.observe(element);
    return () => {
      follow.disconnect();
      created.destroy();
      plot.current = undefined;
    };
  }, [shape]);

  // `chart` is a new object only when the history was read again (the section memoizes it).
  useEffect(() => {
    plot.current?.setData(data());
  }, [chart]);

  return (
    <div class="plot">
      <span class="y-label">{chart.yLabel}</span>
      <div class="plot-area">
        <div ref={box} />
        <span class="x-label">Time</span>
        <div ref={legendBox} />
      </div>
    </div>
  );
}

/** The indexes of the values with no value either side of them; null when there is none. */
function isolated(values: uPlot.AlignedData[number]): number[] | null {
  const found: number[] = [];
  values.forEach((value, i) => {
    if (value !== null && value !== undefined && values[i - 1] == null && values[i + 1] == null) found.push(i);
  });
  return found.length > 0 ? found : null;
}

const LIMIT_STYLE: LineStyle = { dash: [6, 6], marker: 'dashed', width: 2 };
