import type { Channel, Condition, Problem, Rule, Severity } from './api-types.js';

/** The rule form as the inputs hold it: text as typed, so the API judges every value. */
export type RuleFormState = {
  name: string;
  metric: string;
  condition: Condition;
  threshold: string;
  duration_minutes: string;
  severity: Severity;
  channels: Channel[];
  /** `key=value` pairs separated by commas or new lines. */
  scope: string;
  enabled: boolean;
  recovery_threshold: string;
  keep_firing_for_minutes: string;
  no_data_minutes: string;
  no_data_state: 'alerting' | 'ok' | 'keep';
  renotify_minutes: string;
  message_template: string;
  flapping_window_minutes: string;
  flapping_max_transitions: string;
};

/** The form's fields, in the names problem+json paths use (`flapping.window_minutes`). */
export type RuleField =
  | Exclude<keyof RuleFormState, 'flapping_window_minutes' | 'flapping_max_transitions'>
  | 'flapping'
  | 'flapping.window_minutes'
  | 'flapping.max_transitions';

export const emptyRuleForm: RuleFormState = {
  name: '',
  metric: '',
  condition: 'greater_than',
  threshold: '',
  duration_minutes: '0',
  severity: 'warning',
  channels: [],
  scope: '',
  enabled: true,
  recovery_threshold: '',
  keep_firing_for_minutes: '0',
  no_data_minutes: '',
  no_data_state: 'alerting',
  renotify_minutes: '',
  message_template: '',
  flapping_window_minutes: '',
  flapping_max_transitions: '',
};

export function ruleFormOf(rule: Rule): RuleFormState {
  const text = (value: number | null | undefined) =>
    value === null || value === undefined ? '' : String(value);
  return {
    name: rule.name,
    metric: rule.metric,
    condition: rule.condition,
    threshold: String(rule.threshold),
    duration_minutes: String(rule.duration_minutes),
    severity: rule.severity,
    channels: [...rule.channels],
    scope: Object.entries(rule.scope)
      .map(([key, value]) => `${key}=${value}`)
      .join(', '),
    enabled: rule.enabled,
    recovery_threshold: text(rule.recovery_threshold),
    keep_firing_for_minutes: text(rule.keep_firing_for_minutes ?? 0),
    no_data_minutes: text(rule.no_data_minutes),
    no_data_state: rule.no_data_state ?? 'alerting',
    renotify_minutes: text(rule.renotify_minutes),
    message_template: rule.message_template ?? '',
    flapping_window_minutes: text(rule.flapping?.window_minutes),
    flapping_max_transitions: text(rule.flapping?.max_transitions),
  };
}

/**
 * A number as typed: a JSON number when it reads as one, else the text itself, so the API
 * answers 422 on the field rather than the console guessing.
 */
function numberOrText(text: string): number | string {
  const trimmed = text.trim();
  const value = Number(trimmed);
  return trimmed !== '' && Number.isFinite(value) ? value : text;
}

/** Scope text (`env=prod, team=db`) to an object; a pair without `=` keeps an empty value. */
export function parseScope(text: string): Record<string, string> {
  const scope: Record<string, string> = {};
  for (const pair of text.split(/[,\n]/)) {
    const trimmed = pair.trim();
    if (trimmed === '') continue;
    const at = trimmed.indexOf('=');
    if (at === -1) scope[trimmed] = '';
    else scope[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
  }
  return scope;
}

/**
 * The body of POST (no `original`) or PATCH (`original` given: only the fields that differ).
 * Optional fields left empty are omitted on create, so the API's defaults apply; on PATCH an
 * emptied optional field is sent as null (off).
 */
export function ruleRequestBody(
  state: RuleFormState,
  original?: RuleFormState,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const changed = (field: keyof RuleFormState) =>
    original === undefined || JSON.stringify(original[field]) !== JSON.stringify(state[field]);
  const optionalNumber = (field: keyof RuleFormState, text: string) => {
    if (!changed(field)) return;
    if (text.trim() !== '') body[field] = numberOrText(text);
    else if (original !== undefined) body[field] = null;
  };
  if (changed('name')) body['name'] = state.name;
  if (changed('metric')) body['metric'] = state.metric;
  if (changed('condition')) body['condition'] = state.condition;
  if (changed('threshold')) body['threshold'] = numberOrText(state.threshold);
  if (changed('duration_minutes'))
    body['duration_minutes'] =
      state.duration_minutes.trim() === '' ? 0 : numberOrText(state.duration_minutes);
  if (changed('severity')) body['severity'] = state.severity;
  if (changed('channels')) body['channels'] = state.channels;
  if (changed('scope')) body['scope'] = parseScope(state.scope);
  if (changed('enabled')) body['enabled'] = state.enabled;
  optionalNumber('recovery_threshold', state.recovery_threshold);
  if (changed('keep_firing_for_minutes') && state.keep_firing_for_minutes.trim() !== '')
    body['keep_firing_for_minutes'] = numberOrText(state.keep_firing_for_minutes);
  optionalNumber('no_data_minutes', state.no_data_minutes);
  if (changed('no_data_state') && (original !== undefined || state.no_data_state !== 'alerting'))
    body['no_data_state'] = state.no_data_state;
  optionalNumber('renotify_minutes', state.renotify_minutes);
  if (changed('message_template')) {
    if (state.message_template !== '') body['message_template'] = state.message_template;
    else if (original !== undefined) body['message_template'] = null;
  }
  if (changed('flapping_window_minutes') || changed('flapping_max_transitions')) {
    const window = state.flapping_window_minutes.trim();
    const transitions = state.flapping_max_transitions.trim();
    if (window !== '' || transitions !== '') {
      body['flapping'] = {
        window_minutes: numberOrText(state.flapping_window_minutes),
        max_transitions: numberOrText(state.flapping_max_transitions),
      };
    } else if (original !== undefined) body['flapping'] = null;
  }
  return body;
}

const fieldNames: readonly RuleField[] = [
  'name',
  'metric',
  'condition',
  'threshold',
  'duration_minutes',
  'severity',
  'channels',
  'scope',
  'enabled',
  'recovery_threshold',
  'keep_firing_for_minutes',
  'no_data_minutes',
  'no_data_state',
  'renotify_minutes',
  'message_template',
  'flapping.window_minutes',
  'flapping.max_transitions',
  'flapping',
];

/**
 * The messages of a 422 by the form field its `path` names (`channels[1]` → `channels`,
 * `scope["env"]` → `scope`, `flapping.window_minutes` as is). Issues naming no field of the
 * form (the empty path: the whole body) are kept under `form`.
 */
export function fieldErrors(problem: Problem): Partial<Record<RuleField | 'form', string>> {
  const errors: Partial<Record<RuleField | 'form', string>> = {};
  for (const issue of problem.errors ?? []) {
    const field =
      fieldNames.find(
        (name) =>
          issue.path === name ||
          issue.path.startsWith(`${name}.`) ||
          issue.path.startsWith(`${name}[`),
      ) ?? 'form';
    const message =
      field === 'form' && issue.path !== '' ? `${issue.path}: ${issue.message}` : issue.message;
    errors[field] = errors[field] === undefined ? message : `${errors[field]}; ${message}`;
  }
  if (Object.keys(errors).length === 0 && problem.detail !== undefined)
    errors.form = problem.detail;
  return errors;
}
