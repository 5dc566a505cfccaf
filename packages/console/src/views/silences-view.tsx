import { useState } from 'preact/hooks';
import type { ApiClient } from '../api-client.js';
import { ApiError, describeError } from '../api-client.js';
import type { Silence } from '../api-types.js';
import { severities } from '../api-types.js';
import { useCapabilities } from '../capabilities.js';
import { setSearchParam } from '../navigation.js';
import { parseScope } from '../rule-form.js';
import { usePagedList } from '../use-paged-list.js';
import { ErrorNotice, Field, Loading, Time, describedBy } from './common.js';
import { Pager } from './pager.js';

const refreshMs = 15_000;

export function SilencesView(props: { api: ApiClient; search: URLSearchParams }) {
  const capabilities = useCapabilities();
  if (capabilities === undefined) return <Loading what="silences" />;
  if (!capabilities.silences) {
    return (
      <section>
        <h1 tabIndex={-1}>Silences</h1>
        <p class="muted">This server's API has no silences yet.</p>
      </section>
    );
  }
  return <SilenceList {...props} />;
}

function SilenceList(props: { api: ApiClient; search: URLSearchParams }) {
  const { api, search } = props;
  const state = search.get('state') ?? undefined;
  const offset = search.get('offset') ?? undefined;
  const { items, pagination, error, setError, reload } = usePagedList<Silence>(
    api,
    '/silences',
    'silences',
    { state, offset },
    refreshMs,
  );
  return (
    <section>
      <div class="view-head">
        <h1 tabIndex={-1}>Silences</h1>
      </div>
      <div class="controls">
        <label>
          State{' '}
          <select
            name="state"
            value={state ?? ''}
            onChange={(event) => setSearchParam('state', event.currentTarget.value)}
          >
            <option value="">active and pending</option>
            <option value="active">active</option>
            <option value="pending">pending</option>
            <option value="expired">expired</option>
          </select>
        </label>
      </div>
      <ErrorNotice error={error} />
      {items === undefined ? (
        error === undefined && <Loading what="silences" />
      ) : items.length === 0 ? (
        <p class="muted">No silences.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Matchers</th>
                <th scope="col">State</th>
                <th scope="col">Starts</th>
                <th scope="col">Ends</th>
                <th scope="col">Recurrence</th>
                <th scope="col">Comment</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((silence) => (
                <tr key={silence.id}>
                  <td class="tags">{describeMatchers(silence)}</td>
                  <td>{silence.state}</td>
                  <td>
                    <Time at={silence.starts_at} />
                  </td>
                  <td>
                    <Time at={silence.ends_at} />
                  </td>
                  <td>
                    {silence.recurrence === null
                      ? '—'
                      : `${silence.recurrence.rrule} (${silence.recurrence.duration_minutes} min, ${silence.recurrence.timezone})`}
                  </td>
                  <td>{silence.comment}</td>
                  <td>
                    {silence.state !== 'expired' && (
                      <button
                        type="button"
                        aria-label={`Expire silence ${silence.id}`}
                        onClick={() => {
                          api
                            .send('DELETE', `/silences/${encodeURIComponent(silence.id)}`)
                            .then(reload, setError);
                        }}
                      >
                        Expire
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pagination={pagination} label="Silences" />
      <NewSilence api={api} onCreated={reload} />
    </section>
  );
}

function describeMatchers(silence: Silence): string {
  const { tags, ...rest } = silence.matchers;
  const pairs = Object.entries(rest).map(([key, value]) => `${key}=${String(value)}`);
  for (const [key, value] of Object.entries(tags ?? {})) pairs.push(`tags.${key}=${value}`);
  return pairs.join(' ');
}

/** `datetime-local` text for a time, in the browser's zone. */
function localInput(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function NewSilence(props: { api: ApiClient; onCreated: () => void }) {
  const now = new Date();
  const [form, setForm] = useState({
    host: '',
    service_id: '',
    rule_id: '',
    severity: '',
    tags: '',
    starts_at: localInput(now),
    ends_at: localInput(new Date(now.getTime() + 3_600_000)),
    comment: '',
    rrule: '',
    duration_minutes: '',
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | undefined>();
  const set = (field: keyof typeof form, value: string) =>
    setForm((current) => ({ ...current, [field]: value }));
  const submit = async () => {
    const matchers: Record<string, unknown> = {};
    for (const field of ['host', 'service_id', 'rule_id', 'severity'] as const) {
      if (form[field] !== '') matchers[field] = form[field];
    }
    if (form.tags.trim() !== '') matchers['tags'] = parseScope(form.tags);
    try {
      await props.api.send('POST', '/silences', {
        matchers,
        starts_at: new Date(form.starts_at).toISOString(),
        ends_at: new Date(form.ends_at).toISOString(),
        comment: form.comment,
        ...(form.rrule.trim() === ''
          ? {}
          : {
              recurrence: {
                rrule: form.rrule.trim(),
                duration_minutes: Number(form.duration_minutes),
                timezone: form.timezone,
              },
            }),
      });
      setErrors({});
      setMessage('Silence created.');
      props.onCreated();
    } catch (caught) {
      setMessage(undefined);
      if (caught instanceof ApiError && caught.status === 422) {
        const next: Record<string, string> = {};
        for (const issue of caught.problem.errors ?? []) {
          const field =
            issue.path.replace(/^(matchers|recurrence)\.?/, '').split(/[.[]/)[0] || 'matchers';
          next[field] = issue.message;
        }
        setErrors(next);
      } else setMessage(describeError(caught));
    }
  };
  const common = (field: keyof typeof form) => ({
    ...(field === 'rrule' ? { placeholder: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2' } : {}),
    id: `silence-${field}`,
    name: field,
    value: form[field],
    'aria-invalid': errors[field] !== undefined,
    'aria-describedby': describedBy(`silence-${field}`, false, errors[field]),
    onInput: (event: { currentTarget: HTMLInputElement }) => set(field, event.currentTarget.value),
  });
  const input = (
    field: keyof typeof form,
    label: string,
    type: 'text' | 'datetime-local' = 'text',
  ) => (
    <Field id={`silence-${field}`} label={label} error={errors[field]}>
      {type === 'datetime-local' ? (
        <input type="datetime-local" {...common(field)} />
      ) : (
        <input type="text" {...common(field)} />
      )}
    </Field>
  );
  return (
    <form
      class="rule-form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h2>New silence</h2>
      {message !== undefined && (
        <p role="status" class="notice">
          {message}
        </p>
      )}
      {errors['matchers'] !== undefined && (
        <p role="alert" class="error">
          {errors['matchers']}
        </p>
      )}
      <fieldset>
        <legend>Matchers (every one given must match)</legend>
        {input('host', 'Host')}
        {input('service_id', 'Service id')}
        {input('rule_id', 'Rule id')}
        <Field id="silence-severity" label="Severity" error={errors['severity']}>
          <select
            id="silence-severity"
            name="severity"
            value={form.severity}
            onChange={(event) => set('severity', event.currentTarget.value)}
          >
            <option value="">any</option>
            {severities.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
        </Field>
        {input('tags', 'Tags (key=value, comma separated)')}
      </fieldset>
      <fieldset>
        <legend>When</legend>
        {input('starts_at', 'Starts', 'datetime-local')}
        {input('ends_at', 'Ends', 'datetime-local')}
        {input('comment', 'Comment')}
      </fieldset>
      <fieldset>
        <legend>Recurrence (a maintenance window; empty rule: none)</legend>
        {input('rrule', 'RRULE (RFC 5545)')}
        {input('duration_minutes', 'Window (minutes)')}
        {input('timezone', 'Time zone (IANA)')}
      </fieldset>
      <div class="form-actions">
        <button type="submit">Create silence</button>
      </div>
    </form>
  );
}
