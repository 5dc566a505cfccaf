import { useState } from 'preact/hooks';
import { describeAlertCondition } from '../alert-condition.js';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../api-client.js';
import type { ServiceDetail } from '../api-types.js';
import type { MetricRange } from '../metric-range.js';
import { isMetricRange, metricRanges } from '../metric-range.js';
import { Link, setSearchParam } from '../navigation.js';
import { usePolling } from '../use-polling.js';
import { ErrorNotice, Loading, StatusBadge, Time, formatBytes, formatNumber } from './common.js';
import { MetricChart } from './metric-chart.js';
import { PromqlChart } from './promql-chart.js';
import { serviceSelector } from '../service-selector.js';

const refreshMs = 10_000;
/** A host with hundreds of metrics (a node exporter's) gets this many charts at once. */
const maxCharts = 24;

export function ServiceView(props: { api: ApiClient; id: string; search: URLSearchParams }) {
  const { api, id, search } = props;
  const [service, setService] = useState<ServiceDetail | undefined>();
  const [error, setError] = useState<unknown>();
  const [refreshKey, setRefreshKey] = useState(0);
  const rangeParam = search.get('range');
  const range: MetricRange = isMetricRange(rangeParam) ? rangeParam : '1h';

  usePolling(
    async (_first, signal) => {
      try {
        const detail = await api.get<ServiceDetail>(`/services/${encodeURIComponent(id)}`);
        if (signal.cancelled) return;
        setService(detail);
        setError(undefined);
        setRefreshKey((key) => key + 1);
      } catch (caught) {
        if (!signal.cancelled) setError(caught);
        throw caught;
      }
    },
    refreshMs,
    `service:${id}`,
  );

  if (service === undefined) {
    return (
      <section>
        <h1 tabIndex={-1}>Service</h1>
        {error instanceof ApiError && error.status === 404 ? (
          <p role="alert" class="error">
            No service {id} in this organization.{' '}
            <Link to={{ view: 'services' }}>All services</Link>
          </p>
        ) : error !== undefined ? (
          <ErrorNotice error={error} />
        ) : (
          <Loading what="the service" />
        )}
      </section>
    );
  }
  const metrics = Object.entries(service.metrics).sort(([a], [b]) => (a < b ? -1 : 1));
  const chartFilter = (search.get('charts') ?? '').toLowerCase();
  const charted = metrics.filter(([name]) => name.toLowerCase().includes(chartFilter));
  return (
    <section class="service">
      <div class="view-head">
        <h1 tabIndex={-1}>
          {service.name} <StatusBadge status={service.status} />
        </h1>
        <p class="muted">
          {service.id} · last seen <Time at={service.last_seen} />
          {Object.keys(service.tags).length > 0 &&
            ` · ${Object.entries(service.tags)
              .map(([key, value]) => `${key}=${value}`)
              .join(' ')}`}
        </p>
      </div>
      <ErrorNotice error={error} />

      <section aria-labelledby="active-alerts-title">
        <h2 id="active-alerts-title">Active alerts</h2>
        {service.active_alerts.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <ul class="plain">
            {service.active_alerts.map((alert) => (
              <li key={alert.id}>
                <span class={`badge severity-${alert.severity}`}>{alert.severity}</span>{' '}
                {alert.rule_name}: {describeAlertCondition(alert)} (value{' '}
                {formatNumber(alert.value)}) since <Time at={alert.fired_at} />
                {alert.investigation_id !== null && (
                  <>
                    {' · '}
                    <Link to={{ view: 'investigation', id: alert.investigation_id }}>
                      investigation
                    </Link>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="latest-title">
        <h2 id="latest-title">Latest metrics</h2>
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {metrics.map(([name, value]) => (
              <tr key={name}>
                <td>{name}</td>
                <td class="number">{formatNumber(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Charts</h2>
        <fieldset class="ranges">
          <legend>Range</legend>
          {metricRanges.map((each) => (
            <label key={each} class="range">
              <input
                type="radio"
                name="range"
                value={each}
                checked={each === range}
                onChange={() => setSearchParam('range', each === '1h' ? undefined : each)}
              />{' '}
              {each}
            </label>
          ))}
        </fieldset>
        <label>
          Charts of metrics containing{' '}
          <input
            type="search"
            name="charts"
            value={search.get('charts') ?? ''}
            onInput={(event) => setSearchParam('charts', event.currentTarget.value)}
          />
        </label>
        {charted.length > maxCharts && (
          <p class="muted" role="status">
            The first {maxCharts} of {charted.length} metrics are charted: narrow the filter to see
            the others.
          </p>
        )}
        <div class="charts">
          {charted.slice(0, maxCharts).map(([name]) => (
            <MetricChart
              key={`${name}:${range}`}
              api={api}
              serviceId={service.id}
              metric={name}
              range={range}
              refreshKey={refreshKey}
            />
          ))}
        </div>
        <PromqlChart api={api} selector={serviceSelector(service)} range={range} />
      </section>

      <section aria-labelledby="containers-title">
        <h2 id="containers-title">Containers</h2>
        {service.docker_containers.length === 0 ? (
          <p class="muted">
            None reported{service.snapshot_at === null ? '' : ' in the latest snapshot'}.
          </p>
        ) : (
          <table class="compact">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Image</th>
                <th scope="col">Status</th>
                <th scope="col">CPU %</th>
                <th scope="col">Memory</th>
              </tr>
            </thead>
            <tbody>
              {service.docker_containers.map((container) => (
                <tr key={container.name}>
                  <td>{container.name}</td>
                  <td>{container.image ?? '—'}</td>
                  <td>{container.status ?? '—'}</td>
                  <td class="number">{formatNumber(container.cpu_percent)}</td>
                  <td class="number">{formatBytes(container.memory_usage)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section aria-labelledby="processes-title">
        <h2 id="processes-title">Processes</h2>
        {service.processes.length === 0 ? (
          <p class="muted">None reported.</p>
        ) : (
          <table class="compact">
            <thead>
              <tr>
                <th scope="col">PID</th>
                <th scope="col">Name</th>
                <th scope="col">CPU %</th>
                <th scope="col">RSS</th>
              </tr>
            </thead>
            <tbody>
              {[...service.processes]
                .sort((a, b) => (b.cpu_percent ?? 0) - (a.cpu_percent ?? 0))
                .map((process) => (
                  <tr key={process.pid}>
                    <td class="number">{process.pid}</td>
                    <td>{process.name}</td>
                    <td class="number">{formatNumber(process.cpu_percent)}</td>
                    <td class="number">{formatBytes(process.memory_rss)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}
