import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { ApiClient } from '../api-client.js';
import type { MetricSeries } from '../api-types.js';
import type { MetricRange } from '../metric-range.js';
import { metricQuery } from '../metric-range.js';
import { ErrorNotice } from './common.js';

/**
 * One metric of a service over `range`: avg as a line, min..max as a band, drawn by uPlot on a
 * canvas. A refresh (`refreshKey` changes) re-reads the series and hands uPlot the new data; the
 * chart is built once per metric and range.
 */
export function MetricChart(props: {
  api: ApiClient;
  serviceId: string;
  metric: string;
  range: MetricRange;
  refreshKey: number;
}) {
  const { api, serviceId, metric, range, refreshKey } = props;
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const [error, setError] = useState<unknown>();
  const [points, setPoints] = useState<number | undefined>();

  useEffect(
    () => () => {
      plot.current?.destroy();
      plot.current = undefined;
    },
    [range],
  );

  useEffect(() => {
    let cancelled = false;
    const query = metricQuery(range, Date.now());
    api
      .get<MetricSeries>(`/services/${encodeURIComponent(serviceId)}/metrics`, {
        metric,
        ...query,
      })
      .then((series) => {
        if (cancelled || holder.current === null) return;
        const data: uPlot.AlignedData = [
          series.points.map((point) => Date.parse(point.time) / 1000),
          series.points.map((point) => point.avg),
          series.points.map((point) => point.min),
          series.points.map((point) => point.max),
        ];
        setPoints(series.points.length);
        setError(undefined);
        if (plot.current === undefined) {
          plot.current = new uPlot(
            chartOptions(metric, holder.current.clientWidth),
            data,
            holder.current,
          );
        } else {
          plot.current.setData(data);
        }
      })
      .catch((caught: unknown) => {
        if (!cancelled) setError(caught);
      });
    return () => {
      cancelled = true;
    };
  }, [api, serviceId, metric, range, refreshKey]);

  return (
    <figure class="chart" aria-label={`${metric} over the last ${range}`}>
      <figcaption>
        <strong>{metric}</strong>{' '}
        <span class="muted">
          {points === undefined ? '' : `${points} points, ${metricQuery(range, 0).step} step`}
        </span>
      </figcaption>
      <div ref={holder} class="chart-canvas" role="img" aria-label={`Chart of ${metric}`} />
      <ErrorNotice error={error} />
    </figure>
  );
}

function chartOptions(metric: string, width: number): uPlot.Options {
  return {
    width: Math.max(280, width),
    height: 180,
    legend: { show: true, live: false },
    cursor: { drag: { x: true, y: false } },
    series: [
      {},
      { label: `${metric} avg`, stroke: '#2563eb', width: 2, spanGaps: false },
      { label: 'min', stroke: '#93c5fd', width: 1, dash: [4, 4] },
      { label: 'max', stroke: '#1e3a8a', width: 1, dash: [4, 4] },
    ],
    axes: [{}, { size: 60 }],
  };
}
