import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { Heatmap } from '../histogram-heatmap.js';
import { heatmapCellAt, heatmapColour, heatmapY, logTicks } from '../histogram-heatmap.js';
import { bucketInterval } from '../parse-histogram.js';
import type { HistogramPlot } from '../promql-plot.js';
import { quantileName } from '../promql-plot.js';

/** The lines of p50, p90, p99 (`plottedQuantiles`), each on a white casing over the cells. */
const quantileColours = ['#1d4ed8', '#047857', '#0f172a'];

/**
 * One histogram series of the PromQL box: its buckets as a heatmap (time × bucket, the colour
 * the bucket's count or rate) with its quantiles as lines over it, a colour scale, and what is
 * under the pointer.
 */
export function HistogramChart(props: { plot: HistogramPlot }) {
  const { plot } = props;
  const holder = useRef<HTMLDivElement>(null);
  const [pointed, setPointed] = useState('');

  useEffect(() => {
    setPointed('');
    if (holder.current === null) return undefined;
    const chart = new uPlot(
      chartOptions(plot, holder.current.clientWidth, setPointed),
      [
        plot.xs,
        // Each quantile twice: a white casing, then its line, so it reads on any cell.
        ...plot.quantiles.flatMap(({ values }) => {
          const drawn = values.map((v) => (v === null ? null : heatmapY(plot.heatmap, v)));
          return [drawn, drawn];
        }),
      ],
      holder.current,
    );
    return () => chart.destroy();
  }, [plot]);

  const { maxValue } = plot.heatmap;
  return (
    <figure class="histogram-chart" aria-label={`Native histograms of ${plot.label}`}>
      <figcaption>
        <strong>{plot.label}</strong>{' '}
        <span class="muted">
          native histograms: buckets as a heatmap,{' '}
          {plot.quantiles.map((each) => quantileName(each.q)).join(', ')} as lines
        </span>
      </figcaption>
      <div
        ref={holder}
        class="chart-canvas"
        role="img"
        aria-label={`Heatmap of ${plot.label} with its quantiles`}
      />
      <div class="heatmap-scale">
        <span>Colour: a bucket's value (square-root scale)</span>
        <span class="heatmap-scale-ends">
          <span>0</span>
          <span class="heatmap-scale-bar" />
          <span>{formatValue(maxValue)}</span>
        </span>
      </div>
      <p class="heatmap-pointed muted">{pointed}</p>
    </figure>
  );
}

function chartOptions(
  plot: HistogramPlot,
  width: number,
  point: (text: string) => void,
): uPlot.Options {
  const { heatmap } = plot;
  const log = heatmap.yScale === 'log';
  return {
    width: Math.max(280, width),
    height: 300,
    legend: { show: true, live: false },
    cursor: { drag: { x: true, y: false }, points: { show: false } },
    scales: {
      y: log
        ? { distr: 3, log: 10, range: [heatmap.yMin, heatmap.yMax] }
        : { range: [heatmap.yMin, heatmap.yMax] },
    },
    series: [
      {},
      ...plot.quantiles.flatMap((each, i): uPlot.Series[] => [
        {
          label: `${each.label} (casing)`,
          class: 'quantile-casing',
          stroke: 'rgba(255, 255, 255, 0.85)',
          width: 5,
          spanGaps: false,
        },
        {
          label: each.label,
          stroke: quantileColours[i % quantileColours.length] ?? '#0f172a',
          width: 2,
          spanGaps: false,
        },
      ]),
    ],
    axes: [
      {},
      {
        size: 60,
        ...(log && {
          // Our ticks, every one labelled (uPlot's log filter would blank some).
          splits: () => logTicks(heatmap.yMin, heatmap.yMax, 8),
          filter: (_u: uPlot, splits: number[]) => splits,
          values: (_u: uPlot, splits: number[]) => splits.map(formatValue),
        }),
      },
    ],
    hooks: {
      // After the axes and their grid, before the lines: the cells under the quantiles.
      drawAxes: [(u) => drawCells(u, heatmap)],
      setCursor: [(u) => point(describePointer(u, plot))],
    },
  };
}

function drawCells(u: uPlot, heatmap: Heatmap): void {
  const { ctx, bbox } = u;
  const right = bbox.left + bbox.width;
  const half = heatmap.stepSeconds / 2;
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
  ctx.clip();
  for (const cell of heatmap.cells) {
    // Rounded edges: neighbouring cells share theirs, with no seam between them.
    const x0 = Math.round(u.valToPos(cell.t - half, 'x', true));
    const x1 = Math.round(u.valToPos(cell.t + half, 'x', true));
    if (x1 < bbox.left || x0 > right) continue;
    const top = Math.round(u.valToPos(cell.upper, 'y', true));
    const bottom = Math.round(u.valToPos(cell.lower, 'y', true));
    ctx.fillStyle = heatmapColour(cell.value, heatmap.maxValue);
    ctx.fillRect(x0, top, Math.max(1, x1 - x0), Math.max(1, bottom - top));
  }
  ctx.restore();
}

/** The time under the pointer, the quantiles then, and the bucket under it with its value. */
function describePointer(u: uPlot, plot: HistogramPlot): string {
  const { left, top, idx } = u.cursor;
  if (left === undefined || top === undefined || left < 0 || idx === null || idx === undefined) {
    return '';
  }
  const t = plot.xs[idx];
  if (t === undefined) return '';
  const parts = [new Date(t * 1000).toLocaleTimeString()];
  for (const each of plot.quantiles) {
    const value = each.values[idx] ?? null;
    parts.push(`${quantileName(each.q)} ${value === null ? '—' : formatValue(value)}`);
  }
  const cell = heatmapCellAt(plot.heatmap, u.posToVal(left, 'x'), u.posToVal(top, 'y'));
  if (cell !== undefined) {
    parts.push(`bucket ${bucketInterval(cell.bucket, formatValue)}: ${formatValue(cell.value)}`);
  }
  return parts.join(' · ');
}

/**
 * Four significant digits, as a latency or a rate reads best (0.0123, 1.5, 2,048), in exponent
 * form past them (a zero bucket's 2.939e-39).
 */
function formatValue(value: number): string {
  const size = Math.abs(value);
  if (!Number.isFinite(value) || (size !== 0 && (size < 1e-4 || size >= 1e9))) {
    return value.toPrecision(4);
  }
  return value.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}
