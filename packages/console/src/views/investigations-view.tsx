import { useState } from 'preact/hooks';
import type { ApiClient } from '../api-client.js';
import type { Investigation, InvestigationDetail } from '../api-types.js';
import { Link } from '../navigation.js';
import { usePagedList } from '../use-paged-list.js';
import { usePolling } from '../use-polling.js';
import { ErrorNotice, Loading, StatusBadge, Time } from './common.js';
import { Pager } from './pager.js';

const refreshMs = 15_000;

export function InvestigationsView(props: { api: ApiClient; search: URLSearchParams }) {
  const { api, search } = props;
  const offset = search.get('offset') ?? undefined;
  const { items, pagination, error } = usePagedList<Investigation>(
    api,
    '/investigations',
    'investigations',
    { offset },
    refreshMs,
  );
  return (
    <section>
      <div class="view-head">
        <h1 tabIndex={-1}>Investigations</h1>
      </div>
      <ErrorNotice error={error} />
      {items === undefined ? (
        error === undefined && <Loading what="investigations" />
      ) : items.length === 0 ? (
        <p class="muted">
          No investigations yet: one opens when a critical or warning alert fires.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">Findings</th>
              <th scope="col">Opened</th>
              <th scope="col">Completed</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.id}>
                <td>
                  <Link to={{ view: 'investigation', id: item.id }}>{item.title}</Link>
                </td>
                <td>
                  <StatusBadge status={item.status} />
                </td>
                <td class="number">{item.findings.length}</td>
                <td>
                  <Time at={item.created_at} />
                </td>
                <td>
                  <Time at={item.completed_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={pagination} label="Investigations" />
    </section>
  );
}

export function InvestigationView(props: { api: ApiClient; id: string }) {
  const { api, id } = props;
  const [item, setItem] = useState<InvestigationDetail | undefined>();
  const [error, setError] = useState<unknown>();
  usePolling(
    async (_first, signal) => {
      // A finished investigation does not change: stop asking.
      if (item !== undefined && (item.status === 'completed' || item.status === 'failed')) return;
      try {
        const detail = await api.get<InvestigationDetail>(
          `/investigations/${encodeURIComponent(id)}`,
        );
        if (signal.cancelled) return;
        setItem(detail);
        setError(undefined);
      } catch (caught) {
        if (!signal.cancelled) setError(caught);
        throw caught;
      }
    },
    5_000,
    `investigation:${id}`,
  );
  if (item === undefined) {
    return (
      <section>
        <h1 tabIndex={-1}>Investigation</h1>
        {error === undefined ? <Loading what="the investigation" /> : <ErrorNotice error={error} />}
      </section>
    );
  }
  return (
    <section class="investigation">
      <div class="view-head">
        <h1 tabIndex={-1}>
          {item.title} <StatusBadge status={item.status} />
        </h1>
        <p class="muted">
          {item.id} · opened <Time at={item.created_at} />
          {item.service_id !== null && (
            <>
              {' · '}
              <Link to={{ view: 'service', id: item.service_id }}>service</Link>
            </>
          )}
        </p>
      </div>
      <ErrorNotice error={error} />
      {item.analysis != null && (
        <section aria-labelledby="analysis-title">
          <h2 id="analysis-title">Analysis</h2>
          <p>{item.analysis.summary}</p>
          <p>
            <strong>Root cause:</strong> {item.analysis.root_cause}{' '}
            <span class="muted">
              (confidence {Math.round(item.analysis.confidence * 100)}%, {item.analysis.method})
            </span>
          </p>
        </section>
      )}
      <section aria-labelledby="findings-title">
        <h2 id="findings-title">Findings</h2>
        {item.findings.length === 0 ? (
          <p class="muted">None yet.</p>
        ) : (
          <ol class="findings">
            {item.findings.map((finding, index) => (
              <li key={index}>
                <h3>{finding.title}</h3>
                <p>{finding.detail}</p>
                <details>
                  <summary>Evidence</summary>
                  <pre>{JSON.stringify(finding.evidence, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ol>
        )}
      </section>
      {(item.recommendations ?? []).length > 0 && (
        <section aria-labelledby="recommendations-title">
          <h2 id="recommendations-title">Recommendations</h2>
          <ul class="plain">
            {(item.recommendations ?? []).map((each, index) => (
              <li key={index}>
                <span class={`badge priority-${each.priority}`}>{each.priority}</span>{' '}
                <strong>{each.title}</strong>: {each.detail}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        {(item.timeline ?? []).length === 0 ? (
          <p class="muted">Empty.</p>
        ) : (
          <ol class="timeline">
            {(item.timeline ?? []).map((entry, index) => (
              <li key={index}>
                <Time at={entry.at} /> <span class="badge">{entry.type}</span> {entry.description}
              </li>
            ))}
          </ol>
        )}
      </section>
    </section>
  );
}
