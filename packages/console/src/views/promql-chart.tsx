import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { ApiClient } from '../api-client.js';
import type { MetricRange } from '../metric-range.js';
import { metricRangeMs } from '../metric-range.js';
import type { HistogramPlot, MatrixSeries, PromqlPlot } from '../promql-plot.js';
import {
  describeMatrix,
  matrixHistogramPlots,
  matrixToPlot,
  promqlStepSeconds,
} from '../promql-plot.js';
import { ErrorNotice } from './common.js';
import { HistogramChart } from './histogram-chart.js';

/** Float series drawn at once; a query over a whole fleet says how many it left out. */
const maxSeries = 10;
/** Histogram series drawn at once, a heatmap each. */
const maxHistograms = 4;
const palette = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#ca8a04',
  '#db2777',
  '#4b5563',
  '#65a30d',
];

type RangeAnswer = { resultType: string; result: MatrixSeries[] };

/** A range query's answer as drawn: its float series in one chart, its histograms a chart each. */
type Drawn = { summary: string; floats: PromqlPlot; histograms: HistogramPlot[] };

/**
 * A PromQL box under a host's charts: an expression, run over the view's range as a range
 * query of the Prometheus-compatible API. Its float series are plotted by uPlot (the first
 * ten), its native histograms each as a heatmap with quantile lines (the first four).
 * Prefilled with `selector`, the host's own series; nothing runs until asked.
 */
export function PromqlChart(props: { api: ApiClient; selector: string; range: MetricRange }) {
  const { api, selector, range } = props;
  const [expr, setExpr] = useState(selector);
  const [error, setError] = useState<unknown>();
  const [drawn, setDrawn] = useState<Drawn>();
  const [running, setRunning] = useState(false);

  async function run(event: Event): Promise<void> {
    event.preventDefault();
    const spanMs = metricRangeMs(range);
    const stepSeconds = promqlStepSeconds(spanMs);
    const endSeconds = Math.floor(Date.now() / 1000 / stepSeconds) * stepSeconds;
    const startSeconds = endSeconds - Math.floor(spanMs / 1000 / stepSeconds) * stepSeconds;
    const grid = { startSeconds, endSeconds, stepSeconds };
    setRunning(true);
    try {
      const answer = await api.prometheus<RangeAnswer>('/query_range', {
        query: expr,
        start: String(startSeconds),
        end: String(endSeconds),
        step: String(stepSeconds),
      });
      setError(undefined);
      setDrawn({
        summary: describeMatrix(answer.result, stepSeconds, {
          maxFloats: maxSeries,
          maxHistograms,
        }),
        floats: matrixToPlot(answer.result, grid, maxSeries),
        histograms: matrixHistogramPlots(answer.result, grid, maxHistograms).plots,
      });
    } catch (caught) {
      setError(caught);
      setDrawn(undefined);
    } finally {
      setRunning(false);
    }
  }

  return (
    <figure class="promql" aria-label={`PromQL over the last ${range}`}>
      <form class="promql-form" onSubmit={(event) => void run(event)}>
        <label for="promql-expr">PromQL</label>
        <input
          id="promql-expr"
          name="promql"
          type="text"
          spellcheck={false}
          autocomplete="off"
          value={expr}
          onInput={(event) => setExpr(event.currentTarget.value)}
        />
        <button type="submit" disabled={running || expr.trim() === ''}>
          Run
        </button>
      </form>
      <figcaption class="muted">
        <span role="status">{drawn?.summary ?? ''}</span>
      </figcaption>
      {(drawn === undefined || drawn.floats.series.length > 0 || drawn.histograms.length === 0) && (
        <FloatChart plot={drawn?.floats} />
      )}
      {drawn?.histograms.map((plot, i) => (
        <HistogramChart key={i} plot={plot} />
      ))}
      <ErrorNotice error={error} />
    </figure>
  );
}

/** The float series of an answer as lines; an empty frame until there are some. */
function FloatChart(props: { plot: PromqlPlot | undefined }) {
  const { plot } = props;
  const holder = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (holder.current === null || plot === undefined || plot.series.length === 0) {
      return undefined;
    }
    const chart = new uPlot(
      {
        width: Math.max(280, holder.current.clientWidth),
        height: 220,
        legend: { show: true, live: false },
        cursor: { drag: { x: true, y: false } },
        series: [
          {},
          ...plot.series.map((each, i) => ({
            label: each.label,
            stroke: palette[i % palette.length] ?? '#2563eb',
            width: 2,
            spanGaps: false,
          })),
        ],
        axes: [{}, { size: 60 }],
      },
      [plot.xs, ...plot.series.map((each) => each.values)],
      holder.current,
    );
    return () => chart.destroy();
  }, [plot]);

  return (
    <div ref={holder} class="chart-canvas" role="img" aria-label="Chart of the PromQL result" />
  );
}
