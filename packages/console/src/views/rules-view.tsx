import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../api-client.js';
import type { Pagination, Rule } from '../api-types.js';
import { channels, conditions, noDataStates, severities } from '../api-types.js';
import { Link, navigate } from '../navigation.js';
import type { RuleField, RuleFormState } from '../rule-form.js';
import { emptyRuleForm, fieldErrors, ruleFormOf, ruleRequestBody } from '../rule-form.js';
import { ErrorNotice, Field, Loading, Time, describedBy } from './common.js';

export function RulesView(props: { api: ApiClient }) {
  const { api } = props;
  const [rules, setRules] = useState<Rule[] | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api
      .get<{ rules: Rule[]; pagination: Pagination }>('/alerts/rules', { limit: 100 })
      .then((page) => setRules(page.rules), setError);
  }, [api]);
  return (
    <section>
      <div class="view-head">
        <h1 tabIndex={-1}>Rules</h1>
        <Link to={{ view: 'new-rule' }} class="button">
          New rule
        </Link>
      </div>
      <ErrorNotice error={error} />
      {rules === undefined ? (
        error === undefined && <Loading what="rules" />
      ) : rules.length === 0 ? (
        <p class="muted">No rules yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Condition</th>
              <th scope="col">Severity</th>
              <th scope="col">Channels</th>
              <th scope="col">Scope</th>
              <th scope="col">Enabled</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rules.map((rule) => (
              <tr key={rule.id}>
                <td>
                  <Link to={{ view: 'rule', id: rule.id }}>{rule.name}</Link>
                </td>
                <td>
                  {rule.metric} {rule.condition} {rule.threshold}
                  {rule.duration_minutes > 0 && ` for ${rule.duration_minutes} min`}
                </td>
                <td>
                  <span class={`badge severity-${rule.severity}`}>{rule.severity}</span>
                </td>
                <td>{rule.channels.join(', ') || '—'}</td>
                <td class="tags">
                  {Object.entries(rule.scope)
                    .map(([key, value]) => `${key}=${value}`)
                    .join(' ') || 'every service'}
                </td>
                <td>{rule.enabled ? 'yes' : 'no'}</td>
                <td>
                  <Time at={rule.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

type Errors = Partial<Record<RuleField | 'form', string>>;

/** Create (`id` undefined) or edit a rule: every field, the API's 422 shown on its field. */
export function RuleView(props: { api: ApiClient; id: string | undefined }) {
  const { api, id } = props;
  const [original, setOriginal] = useState<RuleFormState | undefined>();
  const [form, setForm] = useState<RuleFormState>(emptyRuleForm);
  const [errors, setErrors] = useState<Errors>({});
  const [loadError, setLoadError] = useState<unknown>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  // The rule this view just created: its new URL needs no reload of what the answer holds.
  const created = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (id !== undefined && id === created.current) return;
    setErrors({});
    setSaved(undefined);
    if (id === undefined) {
      setOriginal(undefined);
      setForm(emptyRuleForm);
      return;
    }
    api.get<Rule>(`/alerts/rules/${encodeURIComponent(id)}`).then((rule) => {
      const state = ruleFormOf(rule);
      setOriginal(state);
      setForm(state);
    }, setLoadError);
  }, [api, id]);

  if (id !== undefined && original === undefined) {
    return (
      <section>
        <h1 tabIndex={-1}>Rule</h1>
        {loadError === undefined ? <Loading what="the rule" /> : <ErrorNotice error={loadError} />}
      </section>
    );
  }

  const set = <K extends keyof RuleFormState>(field: K, value: RuleFormState[K]) =>
    setForm((current) => ({ ...current, [field]: value }));
  const text = (
    field: keyof RuleFormState & RuleField,
    label: string,
    help?: string,
    type: 'text' | 'number' = 'text',
  ) => {
    const inputId = `rule-${field}`;
    const error = errors[field];
    const common = {
      id: inputId,
      name: field,
      value: form[field] as string,
      'aria-invalid': error !== undefined,
      'aria-describedby': describedBy(inputId, help !== undefined, error),
      onInput: (event: { currentTarget: HTMLInputElement }) =>
        set(field, event.currentTarget.value as never),
    };
    return (
      <Field id={inputId} label={label} error={error} {...(help === undefined ? {} : { help })}>
        {type === 'number' ? (
          <input type="number" inputMode="decimal" {...common} />
        ) : (
          <input type="text" {...common} />
        )}
      </Field>
    );
  };
  const select = (
    field: 'condition' | 'severity' | 'no_data_state',
    label: string,
    values: readonly string[],
  ) => {
    const inputId = `rule-${field}`;
    const error = errors[field];
    return (
      <Field id={inputId} label={label} error={error}>
        <select
          id={inputId}
          name={field}
          value={form[field]}
          aria-invalid={error !== undefined}
          aria-describedby={describedBy(inputId, false, error)}
          onChange={(event) => set(field, event.currentTarget.value as never)}
        >
          {values.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </Field>
    );
  };

  const save = async () => {
    setBusy(true);
    setSaved(undefined);
    try {
      const body = ruleRequestBody(form, original);
      const rule =
        id === undefined
          ? await api.send<Rule>('POST', '/alerts/rules', body)
          : await api.send<Rule>('PATCH', `/alerts/rules/${encodeURIComponent(id)}`, body);
      setErrors({});
      const state = ruleFormOf(rule);
      setOriginal(state);
      setForm(state);
      setSaved(id === undefined ? 'Rule created.' : 'Rule saved.');
      if (id === undefined) {
        created.current = rule.id;
        navigate({ view: 'rule', id: rule.id }, true);
      }
    } catch (caught) {
      const next: Errors =
        caught instanceof ApiError && caught.status === 422
          ? fieldErrors(caught.problem)
          : { form: caught instanceof Error ? caught.message : String(caught) };
      if (caught instanceof ApiError && caught.status !== 422) {
        next.form =
          caught.status === 403
            ? 'This API key lacks the write scope (403): rules cannot be changed with it.'
            : `${caught.problem.title ?? `HTTP ${caught.status}`}: ${caught.problem.detail ?? ''}`;
      }
      setErrors(next);
      // Focus the first field the API named, so keyboard users land on it.
      const first = Object.keys(next).find((field) => field !== 'form');
      if (first !== undefined) {
        const target = first === 'flapping' ? 'flapping.window_minutes' : first;
        document.getElementById(`rule-${target}`)?.focus();
      }
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (id === undefined || !confirm(`Delete rule "${form.name}"? Its active alerts resolve.`))
      return;
    try {
      await api.send('DELETE', `/alerts/rules/${encodeURIComponent(id)}`);
      navigate({ view: 'rules' });
    } catch (caught) {
      setErrors({ form: caught instanceof Error ? caught.message : String(caught) });
    }
  };

  const flappingError = errors['flapping'];
  return (
    <section>
      <div class="view-head">
        <h1 tabIndex={-1}>{id === undefined ? 'New rule' : `Rule: ${original?.name ?? ''}`}</h1>
        <Link to={{ view: 'rules' }}>All rules</Link>
      </div>
      {saved !== undefined && (
        <p role="status" class="notice">
          {saved}
        </p>
      )}
      {errors.form !== undefined && (
        <p role="alert" class="error">
          {errors.form}
        </p>
      )}
      <form
        class="rule-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <fieldset>
          <legend>Condition</legend>
          {text('name', 'Name')}
          {text('metric', 'Metric', 'As ingested, e.g. cpu_percent')}
          {select('condition', 'Condition', conditions)}
          {text('threshold', 'Threshold', undefined, 'number')}
          {text(
            'duration_minutes',
            'Duration (minutes)',
            '0 fires on the first breaching sample',
            'number',
          )}
          {select('severity', 'Severity', severities)}
          {text('scope', 'Scope (tags)', 'key=value pairs, comma separated; empty: every service')}
        </fieldset>
        <fieldset
          aria-describedby={errors.channels === undefined ? undefined : 'rule-channels-error'}
        >
          <legend>Channels</legend>
          {channels.map((channel) => (
            <label key={channel} class="check">
              <input
                type="checkbox"
                name="channels"
                value={channel}
                checked={form.channels.includes(channel)}
                onChange={(event) =>
                  set(
                    'channels',
                    event.currentTarget.checked
                      ? [...form.channels, channel]
                      : form.channels.filter((each) => each !== channel),
                  )
                }
              />{' '}
              {channel}
            </label>
          ))}
          {errors.channels !== undefined && (
            <p class="field-error" id="rule-channels-error" role="alert">
              {errors.channels}
            </p>
          )}
          <label class="check">
            <input
              id="rule-enabled"
              type="checkbox"
              name="enabled"
              checked={form.enabled}
              onChange={(event) => set('enabled', event.currentTarget.checked)}
            />{' '}
            Enabled
          </label>
        </fieldset>
        <fieldset>
          <legend>Resolving and notifying</legend>
          {text(
            'recovery_threshold',
            'Recovery threshold',
            'Empty: the threshold itself',
            'number',
          )}
          {text('keep_firing_for_minutes', 'Keep firing for (minutes)', undefined, 'number')}
          {text('no_data_minutes', 'No data after (minutes)', 'Empty: off', 'number')}
          {select('no_data_state', 'On no data', noDataStates)}
          {text('renotify_minutes', 'Renotify every (minutes)', 'Empty: never', 'number')}
          <Field
            id="rule-message_template"
            label="Message template"
            error={errors.message_template}
            help="Placeholders: {{rule_name}} {{host}} {{metric}} {{value}} {{threshold}} {{severity}} {{status}} {{started_at}} {{tags.<key>}}"
          >
            <textarea
              id="rule-message_template"
              name="message_template"
              rows={3}
              value={form.message_template}
              aria-invalid={errors.message_template !== undefined}
              aria-describedby={describedBy('rule-message_template', true, errors.message_template)}
              onInput={(event) => set('message_template', event.currentTarget.value)}
            />
          </Field>
        </fieldset>
        <fieldset
          aria-describedby={flappingError === undefined ? undefined : 'rule-flapping-error'}
        >
          <legend>Flapping (both empty: off)</legend>
          <Field
            id="rule-flapping.window_minutes"
            label="Window (minutes)"
            error={errors['flapping.window_minutes']}
          >
            <input
              id="rule-flapping.window_minutes"
              name="flapping.window_minutes"
              type="number"
              value={form.flapping_window_minutes}
              aria-invalid={errors['flapping.window_minutes'] !== undefined}
              aria-describedby={describedBy(
                'rule-flapping.window_minutes',
                false,
                errors['flapping.window_minutes'],
              )}
              onInput={(event) => set('flapping_window_minutes', event.currentTarget.value)}
            />
          </Field>
          <Field
            id="rule-flapping.max_transitions"
            label="Max transitions"
            error={errors['flapping.max_transitions']}
          >
            <input
              id="rule-flapping.max_transitions"
              name="flapping.max_transitions"
              type="number"
              value={form.flapping_max_transitions}
              aria-invalid={errors['flapping.max_transitions'] !== undefined}
              aria-describedby={describedBy(
                'rule-flapping.max_transitions',
                false,
                errors['flapping.max_transitions'],
              )}
              onInput={(event) => set('flapping_max_transitions', event.currentTarget.value)}
            />
          </Field>
          {flappingError !== undefined && (
            <p class="field-error" id="rule-flapping-error" role="alert">
              {flappingError}
            </p>
          )}
        </fieldset>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {id === undefined ? 'Create rule' : 'Save changes'}
          </button>
          {id !== undefined && (
            <button type="button" class="danger" onClick={() => void remove()}>
              Delete rule
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
