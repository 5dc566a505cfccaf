import { useMemo, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../api-client.js';
import { fetchAllPages } from '../api-client.js';
import type { Service } from '../api-types.js';
import { serviceStatuses } from '../api-types.js';
import type { HostGroup } from '../host-map.js';
import { groupServices, tagKeys } from '../host-map.js';
import { Link, navigate, setSearchParam } from '../navigation.js';
import type { ServiceColumn, SortOrder } from '../service-table.js';
import { serviceColumns, tableRows, visibleWindow } from '../service-table.js';
import { usePolling } from '../use-polling.js';
import { ErrorNotice, Loading, StatusBadge, Time } from './common.js';

/**
 * Refresh period of the services view: 10 s, or 30 s above 1,000 services (a refresh reads the
 * whole list, a page of 100 per request).
 */
const refreshMs = (count: number) => (count > 1_000 ? 30_000 : 10_000);
/** A group with more services than this is drawn as status bars, not one tile per service. */
const maxTilesPerGroup = 400;
const rowHeightPx = 34;
/** While the first load gathers pages, the view is redrawn at most this often. */
const progressiveDrawMs = 400;
const tableViewportPx = 480;

export function ServicesView(props: { api: ApiClient; search: URLSearchParams }) {
  const { api, search } = props;
  const [services, setServices] = useState<Service[] | undefined>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>();
  const [updatedAt, setUpdatedAt] = useState<Date | undefined>();
  const status = search.get('status') ?? undefined;
  const countRef = useRef(0);
  countRef.current = total;

  usePolling(
    async (first, signal) => {
      let lastDraw = -Infinity;
      try {
        const all = await fetchAllPages<Service>(
          api,
          '/services',
          'services',
          { status },
          // The first load draws the first page at once, then what has come at most every
          // `progressiveDrawMs` (a draw regroups and sorts everything so far); later refreshes
          // swap in the whole list.
          (items, count) => {
            if (!first || signal.cancelled) return;
            const now = performance.now();
            if (items.length > 100 && now - lastDraw < progressiveDrawMs) return;
            lastDraw = now;
            setServices(items);
            setTotal(count);
          },
        );
        if (signal.cancelled) return;
        setServices(all);
        setTotal(all.length);
        setUpdatedAt(new Date());
        setError(undefined);
      } catch (caught) {
        if (!signal.cancelled) setError(caught);
        throw caught;
      }
    },
    () => refreshMs(countRef.current),
    `services:${status ?? ''}`,
  );

  const groupBy = search.get('group') ?? undefined;
  const keys = useMemo(() => tagKeys(services ?? []), [services]);
  // The same element while the list and the grouping stay: Preact skips an unchanged vnode, so
  // typing in the table's filter or scrolling it never redraws the map.
  const hostMap = useMemo(
    () => (services === undefined ? null : <HostMap services={services} groupBy={groupBy} />),
    [services, groupBy],
  );
  return (
    <section class="services">
      <div class="view-head">
        <h1 tabIndex={-1}>Services</h1>
        <p class="muted" role="status" aria-live="polite">
          {services === undefined
            ? ''
            : services.length < total
              ? `Loading ${services.length.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}…`
              : `${total.toLocaleString('en-US')} services`}
          {updatedAt !== undefined && (
            <>
              {' · updated '}
              {updatedAt.toLocaleTimeString()}
            </>
          )}
        </p>
      </div>
      <ErrorNotice error={error} />
      <div class="controls">
        <label>
          Group by tag{' '}
          <select
            name="group"
            value={groupBy ?? ''}
            onChange={(event) => setSearchParam('group', event.currentTarget.value)}
          >
            <option value="">(none)</option>
            {keys.map((key) => (
              <option key={key} value={key}>
                {key}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select
            name="status"
            value={status ?? ''}
            onChange={(event) => setSearchParam('status', event.currentTarget.value)}
          >
            <option value="">all</option>
            {serviceStatuses.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
        </label>
      </div>
      {services === undefined ? (
        error === undefined && <Loading what="services" />
      ) : (
        <>
          {hostMap}
          <ServiceTable services={services} search={search} />
        </>
      )}
    </section>
  );
}

function HostMap(props: { services: Service[]; groupBy: string | undefined }) {
  const groups = useMemo(
    () => groupServices(props.services, props.groupBy),
    [props.services, props.groupBy],
  );
  return (
    <section class="host-map" aria-labelledby="host-map-title">
      <h2 id="host-map-title">Host map</h2>
      <ul class="legend" aria-label="Status colours">
        {serviceStatuses.map((status) => (
          <li key={status}>
            <span class={`swatch status-${status}`} aria-hidden="true" /> {status}
          </li>
        ))}
      </ul>
      <div class="groups">
        {groups.map((group) => (
          <Group key={group.value ?? '\u0000'} group={group} groupBy={props.groupBy} />
        ))}
      </div>
    </section>
  );
}

function Group(props: { group: HostGroup; groupBy: string | undefined }) {
  const { group, groupBy } = props;
  const count = group.services.length;
  const title =
    groupBy === undefined
      ? 'All services'
      : group.value === undefined
        ? `no ${groupBy} tag`
        : `${groupBy}=${group.value}`;
  const summary = serviceStatuses
    .filter((status) => group.counts[status] > 0)
    .map((status) => `${group.counts[status]} ${status}`)
    .join(', ');
  return (
    <figure
      class={`group worst-${group.worst}`}
      // Size by count: a group's share of the row grows with its number of services.
      style={{ flexGrow: count, flexBasis: `${Math.min(100, 8 + Math.sqrt(count) * 4)}%` }}
    >
      <figcaption>
        <strong>{title}</strong>{' '}
        <span class="muted">
          ({count}: {summary})
        </span>
      </figcaption>
      {count <= maxTilesPerGroup ? (
        <ul class="tiles">
          {group.services.map((service) => (
            <li key={service.id}>
              <Link
                to={{ view: 'service', id: service.id }}
                class={`tile status-${service.status}`}
                title={`${service.name}: ${service.status}`}
                aria-label={`${service.name}, ${service.status}`}
              >
                <span class="tile-name">{service.name}</span>
              </Link>
            </li>
          ))}
        </ul>
      ) : (
        <div class="bars" role="img" aria-label={`${title}: ${summary}`}>
          {serviceStatuses
            .filter((status) => group.counts[status] > 0)
            .map((status) => (
              <span
                key={status}
                class={`bar status-${status}`}
                style={{ flexGrow: group.counts[status] }}
                title={`${group.counts[status]} ${status}`}
              >
                {group.counts[status]}
              </span>
            ))}
        </div>
      )}
    </figure>
  );
}

const columnLabels: Record<ServiceColumn, string> = {
  name: 'Name',
  status: 'Status',
  last_seen: 'Last seen',
  metrics: 'Metrics',
  tags: 'Tags',
};

function ServiceTable(props: { services: Service[]; search: URLSearchParams }) {
  const { services, search } = props;
  const filter = search.get('q') ?? '';
  const column = (search.get('sort') ?? 'name') as ServiceColumn;
  const order: SortOrder = {
    column: serviceColumns.includes(column) ? column : 'name',
    descending: search.get('desc') === '1',
  };
  const [draft, setDraft] = useState(filter);
  const rows = useMemo(
    () => tableRows(services, filter, order),
    [services, filter, order.column, order.descending],
  );
  const [scrollTop, setScrollTop] = useState(0);
  const frame = useRef<number | undefined>(undefined);
  const { start, end } = visibleWindow(rows.length, rowHeightPx, scrollTop, tableViewportPx);
  const sortBy = (next: ServiceColumn) => {
    const descending = order.column === next ? !order.descending : false;
    setSearchParam('sort', next === 'name' ? undefined : next);
    setSearchParam('desc', descending ? '1' : undefined);
  };
  return (
    <section class="service-table" aria-labelledby="service-table-title">
      <h2 id="service-table-title">Table</h2>
      <form
        class="controls"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setSearchParam('q', draft);
        }}
      >
        <label>
          Filter{' '}
          <input
            type="search"
            name="q"
            value={draft}
            placeholder="name, status or tag=value"
            onInput={(event) => {
              setDraft(event.currentTarget.value);
              setSearchParam('q', event.currentTarget.value);
            }}
          />
        </label>
        <span class="muted" role="status">
          {rows.length.toLocaleString('en-US')} shown
        </span>
      </form>
      <div
        class="table-scroll"
        style={{ height: `${tableViewportPx}px` }}
        tabIndex={0}
        aria-label="Services table, scrollable"
        onScroll={(event) => {
          const top = event.currentTarget.scrollTop;
          if (frame.current !== undefined) cancelAnimationFrame(frame.current);
          frame.current = requestAnimationFrame(() => setScrollTop(top));
        }}
      >
        <table aria-rowcount={rows.length + 1}>
          <thead>
            <tr aria-rowindex={1}>
              {serviceColumns.map((each) => (
                <th
                  key={each}
                  scope="col"
                  aria-sort={
                    order.column === each
                      ? order.descending
                        ? 'descending'
                        : 'ascending'
                      : undefined
                  }
                >
                  <button type="button" onClick={() => sortBy(each)}>
                    {columnLabels[each]}
                    <span aria-hidden="true">
                      {order.column === each ? (order.descending ? ' ▼' : ' ▲') : ''}
                    </span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {start > 0 && (
              <tr
                aria-hidden="true"
                class="spacer"
                style={{ height: `${start * rowHeightPx}px` }}
              />
            )}
            {rows.slice(start, end).map((service, index) => (
              <tr
                key={service.id}
                aria-rowindex={start + index + 2}
                style={{ height: `${rowHeightPx}px` }}
                onDblClick={() => navigate({ view: 'service', id: service.id })}
              >
                <td>
                  <Link to={{ view: 'service', id: service.id }}>{service.name}</Link>
                </td>
                <td>
                  <StatusBadge status={service.status} />
                </td>
                <td>
                  <Time at={service.last_seen} />
                </td>
                <td>{Object.keys(service.metrics).length}</td>
                <td class="tags">
                  {Object.entries(service.tags)
                    .map(([key, value]) => `${key}=${value}`)
                    .join(' ')}
                </td>
              </tr>
            ))}
            {end < rows.length && (
              <tr
                aria-hidden="true"
                class="spacer"
                style={{ height: `${(rows.length - end) * rowHeightPx}px` }}
              />
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
