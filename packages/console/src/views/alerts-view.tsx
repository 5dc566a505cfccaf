import { useState } from 'preact/hooks';
import { describeAlertCondition } from '../alert-condition.js';
import type { ApiClient } from '../api-client.js';
import { describeError } from '../api-client.js';
import type { Alert } from '../api-types.js';
import { severities } from '../api-types.js';
import { useCapabilities } from '../capabilities.js';
import { Link, setSearchParam } from '../navigation.js';
import { usePagedList } from '../use-paged-list.js';
import { ErrorNotice, Loading, Time, formatNumber } from './common.js';
import { Pager } from './pager.js';

const refreshMs = 15_000;

type Filter = { name: string; label: string; values: readonly string[]; needs?: 'acknowledge' };

const filters: Filter[] = [
  { name: 'status', label: 'Status', values: ['active', 'resolved', 'all'] },
  { name: 'severity', label: 'Severity', values: severities },
  { name: 'acknowledged', label: 'Acknowledged', values: ['true', 'false'], needs: 'acknowledge' },
  { name: 'silenced', label: 'Silenced', values: ['true', 'false'], needs: 'acknowledge' },
  { name: 'reason', label: 'Reason', values: ['threshold', 'no_data'], needs: 'acknowledge' },
];

export function AlertsView(props: { api: ApiClient; search: URLSearchParams }) {
  const { api, search } = props;
  const capabilities = useCapabilities();
  const query: Record<string, string | undefined> = {};
  for (const filter of filters) query[filter.name] = search.get(filter.name) ?? undefined;
  query['offset'] = search.get('offset') ?? undefined;
  query['service_id'] = search.get('service_id') ?? undefined;
  query['rule_id'] = search.get('rule_id') ?? undefined;

  const {
    items: alerts,
    pagination,
    error,
    reload,
  } = usePagedList<Alert>(api, '/alerts', 'alerts', query, refreshMs);

  return (
    <section>
      <div class="view-head">
        <h1 tabIndex={-1}>Alerts</h1>
      </div>
      <div class="controls">
        {filters
          .filter((filter) => filter.needs === undefined || capabilities?.[filter.needs] === true)
          .map((filter) => (
            <label key={filter.name}>
              {filter.label}{' '}
              <select
                name={filter.name}
                value={search.get(filter.name) ?? ''}
                onChange={(event) => {
                  setSearchParam('offset', undefined);
                  setSearchParam(filter.name, event.currentTarget.value);
                }}
              >
                <option value="">{filter.name === 'status' ? 'active (default)' : 'any'}</option>
                {filter.values.map((value) => (
                  <option key={value} value={value}>
                    {value}
                  </option>
                ))}
              </select>
            </label>
          ))}
      </div>
      <ErrorNotice error={error} />
      {alerts === undefined ? (
        error === undefined && <Loading what="alerts" />
      ) : alerts.length === 0 ? (
        <p class="muted">No alerts match.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Rule</th>
                <th scope="col">Host</th>
                <th scope="col">Condition</th>
                <th scope="col">Value</th>
                <th scope="col">Status</th>
                <th scope="col">Fired</th>
                <th scope="col">Investigation</th>
                {capabilities?.acknowledge === true && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {alerts.map((alert) => (
                <AlertRow
                  key={alert.id}
                  api={api}
                  alert={alert}
                  actions={capabilities?.acknowledge === true}
                  silences={capabilities?.silences === true}
                  onChanged={reload}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pagination={pagination} label="Alerts" />
    </section>
  );
}

function AlertRow(props: {
  api: ApiClient;
  alert: Alert;
  actions: boolean;
  silences: boolean;
  onChanged: () => void;
}) {
  const { api, alert, actions, silences, onChanged } = props;
  const [open, setOpen] = useState<'acknowledge' | 'silence' | undefined>();
  const [comment, setComment] = useState('');
  const [hours, setHours] = useState('1');
  const [message, setMessage] = useState<string | undefined>();
  const idBase = `alert-${alert.id}`;
  const submit = async () => {
    try {
      if (open === 'acknowledge') {
        await api.send('POST', `/alerts/${encodeURIComponent(alert.id)}/acknowledge`, {
          ...(comment === '' ? {} : { comment }),
        });
      } else if (open === 'silence') {
        const startsAt = new Date();
        const endsAt = new Date(startsAt.getTime() + Number(hours) * 3_600_000);
        await api.send('POST', '/silences', {
          matchers: { service_id: alert.service_id, rule_id: alert.rule_id },
          starts_at: startsAt.toISOString(),
          ends_at: endsAt.toISOString(),
          comment:
            comment === ''
              ? `Silenced from the console: ${alert.rule_name} on ${alert.host}`
              : comment,
        });
      }
      setOpen(undefined);
      setComment('');
      setMessage(undefined);
      onChanged();
    } catch (caught) {
      setMessage(describeError(caught));
    }
  };
  return (
    <>
      <tr>
        <td>
          <span class={`badge severity-${alert.severity}`}>{alert.severity}</span>
          {alert.flapping === true && <span class="badge">flapping</span>}
        </td>
        <td>{alert.rule_name}</td>
        <td>
          <Link to={{ view: 'service', id: alert.service_id }}>{alert.host}</Link>
        </td>
        <td>{describeAlertCondition(alert)}</td>
        <td class="number">{formatNumber(alert.value)}</td>
        <td>
          {alert.status}
          {alert.acknowledged_at != null && ' · acknowledged'}
          {alert.silenced === true && ' · silenced'}
        </td>
        <td>
          <Time at={alert.fired_at} />
        </td>
        <td>
          {alert.investigation_id === null ? (
            '—'
          ) : (
            <Link to={{ view: 'investigation', id: alert.investigation_id }}>open</Link>
          )}
        </td>
        {actions && (
          <td class="actions">
            {alert.acknowledged_at == null ? (
              <button
                type="button"
                onClick={() => setOpen(open === 'acknowledge' ? undefined : 'acknowledge')}
                aria-label={`Acknowledge ${alert.rule_name} on ${alert.host}`}
              >
                Acknowledge
              </button>
            ) : (
              <button
                type="button"
                onClick={() => {
                  api
                    .send('DELETE', `/alerts/${encodeURIComponent(alert.id)}/acknowledge`)
                    .then(onChanged, (caught: unknown) => setMessage(describeError(caught)));
                }}
              >
                Unacknowledge
              </button>
            )}
            {silences && (
              <button
                type="button"
                onClick={() => setOpen(open === 'silence' ? undefined : 'silence')}
                aria-label={`Silence ${alert.rule_name} on ${alert.host}`}
              >
                Silence
              </button>
            )}
          </td>
        )}
      </tr>
      {(open !== undefined || message !== undefined) && (
        <tr class="inline-form">
          <td colSpan={9}>
            {open !== undefined && (
              <form
                onSubmit={(event) => {
                  event.preventDefault();
                  void submit();
                }}
              >
                {open === 'silence' && (
                  <label>
                    For{' '}
                    <select
                      id={`${idBase}-hours`}
                      value={hours}
                      onChange={(event) => setHours(event.currentTarget.value)}
                    >
                      <option value="1">1 hour</option>
                      <option value="4">4 hours</option>
                      <option value="24">24 hours</option>
                    </select>
                  </label>
                )}{' '}
                <label>
                  Comment{' '}
                  <input
                    type="text"
                    value={comment}
                    onInput={(event) => setComment(event.currentTarget.value)}
                  />
                </label>{' '}
                <button type="submit">
                  {open === 'acknowledge' ? 'Confirm acknowledgement' : 'Create silence'}
                </button>{' '}
                <button type="button" onClick={() => setOpen(undefined)}>
                  Cancel
                </button>
              </form>
            )}
            {message !== undefined && (
              <p role="alert" class="error">
                {message}
              </p>
            )}
          </td>
        </tr>
      )}
    </>
  );
}
