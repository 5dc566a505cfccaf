import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { ApiClient } from '../api-client.js';
import type { MetricRange } from '../metric-range.js';
import { metricRangeMs } from '../metric-range.js';
import type { MatrixSeries } from '../promql-plot.js';
import { matrixToPlot, promqlStepSeconds } from '../promql-plot.js';
import { ErrorNotice } from './common.js';

/** Series drawn at once; a query over a whole fleet says how many it left out. */
const maxSeries = 10;
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

/**
 * A PromQL box under a host's charts: an expression, run over the view's range as a range
 * query of the Prometheus-compatible API, its series plotted by uPlot (the first ten).
 * Prefilled with `selector`, the host's own series; nothing runs until asked.
 */
export function PromqlChart(props: { api: ApiClient; selector: string; range: MetricRange }) {
  const { api, selector, range } = props;
  const [expr, setExpr] = useState(selector);
  const [error, setError] = useState<unknown>();
  const [summary, setSummary] = useState<string>();
  const [running, setRunning] = useState(false);
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);

  useEffect(
    () => () => {
      plot.current?.destroy();
      plot.current = undefined;
    },
    [],
  );

  async function run(event: Event): Promise<void> {
    event.preventDefault();
    const spanMs = metricRangeMs(range);
    const stepSeconds = promqlStepSeconds(spanMs);
    const endSeconds = Math.floor(Date.now() / 1000 / stepSeconds) * stepSeconds;
    const startSeconds = endSeconds - Math.floor(spanMs / 1000 / stepSeconds) * stepSeconds;
    setRunning(true);
    try {
      const answer = await api.prometheus<RangeAnswer>('/query_range', {
        query: expr,
        start: String(startSeconds),
        end: String(endSeconds),
        step: String(stepSeconds),
      });
      const data = matrixToPlot(
        answer.result,
        { startSeconds, endSeconds, stepSeconds },
        maxSeries,
      );
      setError(undefined);
      setSummary(
        `${answer.result.length} series, ${stepSeconds} s step` +
          (data.omitted > 0 ? `: the first ${maxSeries} drawn` : ''),
      );
      plot.current?.destroy();
      plot.current = undefined;
      if (holder.current !== null && data.series.length > 0) {
        plot.current = new uPlot(
          {
            width: Math.max(280, holder.current.clientWidth),
            height: 220,
            legend: { show: true, live: false },
            cursor: { drag: { x: true, y: false } },
            series: [
              {},
              ...data.series.map((each, i) => ({
                label: each.label,
                stroke: palette[i % palette.length] ?? '#2563eb',
                width: 2,
                spanGaps: false,
              })),
            ],
            axes: [{}, { size: 60 }],
          },
          [data.xs, ...data.series.map((each) => each.values)],
          holder.current,
        );
      }
    } catch (caught) {
      setError(caught);
      setSummary(undefined);
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
        <span role="status">{summary ?? ''}</span>
      </figcaption>
      <div ref={holder} class="chart-canvas" role="img" aria-label="Chart of the PromQL result" />
      <ErrorNotice error={error} />
    </figure>
  );
}
