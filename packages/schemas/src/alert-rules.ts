import { z } from 'zod';
import { alertConditions, alertSeverities, paginationSchema } from './api.js';
import type { AlertCondition, AlertSeverity } from './api.js';
import { ingestLimits, metricNamePattern } from './ingest.js';
import { keyNamesDocument, storableRecord, storableText } from './input-policy.js';
import { messageTemplatePlaceholders, parseMessageTemplate } from './message-template.js';

/**
 * Wire formats of `/api/v1/alerts/rules`: the create (POST) and change (PATCH) bodies, the
 * stored rule and the list. Bodies are strict: an unknown or read-only field is a 422, so a
 * misspelt optional field (`duration` for `duration_minutes`) is never silently ignored.
 */

/** Bounds of a rule, as the API documents them. */
const alertRuleLimits = {
  maxNameLength: 200,
  maxDurationMinutes: 1440,
  maxScopePairs: ingestLimits.maxTags,
  maxScopeKeyLength: ingestLimits.maxTagKeyLength,
  maxScopeValueLength: ingestLimits.maxTagValueLength,
  maxKeepFiringForMinutes: 1440,
  maxNoDataMinutes: 1440,
  maxRenotifyMinutes: 10_080,
  maxMessageTemplateLength: 2000,
  maxFlappingWindowMinutes: 1440,
  minFlappingTransitions: 2,
  maxFlappingTransitions: 100,
} as const;

const noDataStates = ['alerting', 'ok', 'keep'] as const;
export type NoDataState = (typeof noDataStates)[number];

/**
 * More than `maxTransitions` state changes of a (rule, service) within `windowMinutes` make
 * its alert flapping.
 */
export type RuleFlapping = { windowMinutes: number; maxTransitions: number };

const alertChannels = ['slack', 'email', 'webhook', 'alertmanager'] as const;
type AlertChannel = (typeof alertChannels)[number];

/** `is required` when the field is absent, `must be <what>` when it has another type. */
const typeError = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${what}`;

const oneOf = (values: readonly string[]) => `must be one of ${values.join(', ')}`;

/** JavaScript's `\s` (what `String.prototype.trim` removes), spelt out for other regex dialects. */
const whiteSpace =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** Not blank: at least one character that is not white space. */
const nonBlankPattern = new RegExp(`[^${whiteSpace}]`);

const nameSchema = storableText(
  z
    .string({ error: typeError('a string') })
    .min(1, { error: 'must not be blank', abort: true })
    .max(alertRuleLimits.maxNameLength, {
      error: `must be at most ${alertRuleLimits.maxNameLength} characters`,
    })
    .regex(nonBlankPattern, { error: 'must not be blank' }),
).meta({
  description: `1 to ${alertRuleLimits.maxNameLength} characters, not blank (not only white space).`,
  // Both checks in one pattern: the document shows a single one per string.
  pattern: `^(?=[\\s\\S]*[^${whiteSpace}])[^\\u0000]*$`,
});

const metricSchema = z
  .string({ error: typeError('a string') })
  .regex(metricNamePattern, { error: 'must be a metric name such as cpu_percent' })
  .meta({
    description: 'The metric evaluated, named as ingested (`^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$`).',
    example: 'cpu_percent',
  });

const conditionSchema = z
  .enum(alertConditions, { error: oneOf(alertConditions) })
  .meta({ description: 'How a sample value is compared with `threshold`.' });

const thresholdSchema = z.number({ error: typeError('a finite number') });

const durationMinutesSchema = z
  .number({ error: typeError('an integer') })
  .int({ error: `must be an integer from 0 to ${alertRuleLimits.maxDurationMinutes}` })
  .min(0, { error: `must be an integer from 0 to ${alertRuleLimits.maxDurationMinutes}` })
  .max(alertRuleLimits.maxDurationMinutes, {
    error: `must be an integer from 0 to ${alertRuleLimits.maxDurationMinutes}`,
  })
  .meta({
    description:
      'Minutes the condition must hold on every sample before the alert fires; 0 fires on ' +
      'the first breaching sample.',
  });

const severitySchema = z.enum(alertSeverities, { error: oneOf(alertSeverities) });

const channelsSchema = z
  .array(z.enum(alertChannels, { error: oneOf(alertChannels) }), {
    error: typeError('an array'),
  })
  .refine((channels) => new Set(channels).size === channels.length, {
    error: 'must not name a channel twice',
  })
  .meta({
    description:
      'Where the alert is notified when it fires and resolves (targets are configured per ' +
      'organization under /api/v1/notification-channels). No duplicates.',
    uniqueItems: true,
  });

const scopeKeyMessage = `must be 1 to ${alertRuleLimits.maxScopeKeyLength} characters`;

const scopeSchema = storableRecord(
  z
    .string()
    .min(1, { error: scopeKeyMessage })
    .max(alertRuleLimits.maxScopeKeyLength, { error: scopeKeyMessage }),
  storableText(
    z.string({ error: 'must be a string' }).max(alertRuleLimits.maxScopeValueLength, {
      error: `must be at most ${alertRuleLimits.maxScopeValueLength} characters`,
    }),
  ),
  { typeMessage: 'must be an object of strings' },
)
  .refine((scope) => Object.keys(scope).length <= alertRuleLimits.maxScopePairs, {
    error: `must have at most ${alertRuleLimits.maxScopePairs} pairs`,
  })
  .meta({
    description:
      'A tag filter: the rule applies to the services whose tags include every pair. `{}` ' +
      'applies it to every service.',
    example: { environment: 'prod' },
    maxProperties: alertRuleLimits.maxScopePairs,
    propertyNames: keyNamesDocument({
      minLength: 1,
      maxLength: alertRuleLimits.maxScopeKeyLength,
    }),
  });

const enabledSchema = z
  .boolean({ error: typeError('true or false') })
  .meta({ description: 'A disabled rule is not evaluated; disabling it resolves its alerts.' });

/** An integer from `min` to `max`, with one message for every way of missing it. */
function boundedInteger(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z
    .number({ error: typeError('an integer') })
    .int({ error: message })
    .min(min, { error: message })
    .max(max, { error: message });
}

const recoveryThresholdSchema = z
  .number({ error: typeError('a finite number or null') })
  .nullable()
  .meta({
    description:
      'A firing alert resolves only on a sample for which the condition evaluated against ' +
      'this value does not hold (hysteresis); null: against `threshold`. It must lie on the ' +
      'non-breaching side: at most `threshold` for `greater_than(_or_equal)`, at least ' +
      '`threshold` for `less_than(_or_equal)`; not allowed with `equal` / `not_equal` (422).',
  });

const keepFiringForMinutesSchema = boundedInteger(0, alertRuleLimits.maxKeepFiringForMinutes).meta({
  description:
    'Once the resolve condition is met, the alert stays active until samples keep meeting ' +
    'it for this many minutes (sample time); a breaching sample in between keeps it firing.',
});

const noDataMinutesSchema = boundedInteger(1, alertRuleLimits.maxNoDataMinutes)
  .nullable()
  .meta({
    description:
      'When a service in the rule’s scope that has sent the metric before sends none for ' +
      'this many minutes (wall clock), `no_data_state` applies. null: off.',
  });

const noDataStateSchema = z.enum(noDataStates, { error: oneOf(noDataStates) }).meta({
  description:
    'What no data does: `alerting` fires an alert with `reason` `no_data` (value null), `ok` ' +
    'resolves the active alert, `keep` changes nothing. A sample of the metric resolves a ' +
    '`no_data` alert.',
});

const renotifyMinutesSchema = boundedInteger(1, alertRuleLimits.maxRenotifyMinutes)
  .nullable()
  .meta({
    description:
      'An active, unacknowledged, unsilenced alert is notified again every this many ' +
      'minutes. null: never.',
  });

const messageTemplateSchema = storableText(
  z.string({ error: typeError('a string or null') }).max(alertRuleLimits.maxMessageTemplateLength, {
    error: `must be at most ${alertRuleLimits.maxMessageTemplateLength} characters`,
  }),
)
  .superRefine((template, ctx) => {
    const parsed = parseMessageTemplate(template);
    if (!parsed.success) ctx.addIssue({ code: 'custom', message: parsed.message, input: template });
  })
  .nullable()
  .meta({
    description:
      'The text of the rule’s notifications, with ' +
      `${messageTemplatePlaceholders.map((name) => `\`{{${name}}}\``).join(', ')} and ` +
      '`{{tags.<key>}}` (a tag of the service) substituted. An unknown placeholder is 422. ' +
      'null: the default message.',
    example: '{{severity}}: {{rule_name}} on {{host}} ({{metric}} = {{value}}) is {{status}}',
  });

const flappingSchema = z
  .strictObject(
    {
      window_minutes: boundedInteger(1, alertRuleLimits.maxFlappingWindowMinutes),
      max_transitions: boundedInteger(
        alertRuleLimits.minFlappingTransitions,
        alertRuleLimits.maxFlappingTransitions,
      ),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'is not a field of flapping'
          : issue.code === 'invalid_type'
            ? 'must be an object or null'
            : undefined,
    },
  )
  .nullable()
  .meta({
    description:
      'Flap detection, null: off. An alert whose (rule, service) changed state more than ' +
      '`max_transitions` times within `window_minutes` is marked `flapping`; its ' +
      'notifications are held until it has been stable for `window_minutes`, then one ' +
      'message says where it settled.',
  });

/** What `recovery_threshold` is checked against: the rule as it is (or would be) stored. */
type RecoveryRule = {
  condition: AlertCondition;
  threshold: number;
  recoveryThreshold: number | null;
};

/**
 * Why the rule's `recovery_threshold` cannot be stored with its condition and threshold, or
 * undefined when it can. Checked on create and on the rule a PATCH would store.
 */
export function recoveryThresholdProblem(rule: RecoveryRule): string | undefined {
  const { condition, threshold, recoveryThreshold } = rule;
  if (recoveryThreshold === null) return undefined;
  switch (condition) {
    case 'equal':
    case 'not_equal':
      return `is not allowed with condition ${condition}`;
    case 'greater_than':
    case 'greater_than_or_equal':
      return recoveryThreshold <= threshold
        ? undefined
        : `must be at most threshold (${threshold}) with condition ${condition}`;
    case 'less_than':
    case 'less_than_or_equal':
      return recoveryThreshold >= threshold
        ? undefined
        : `must be at least threshold (${threshold}) with condition ${condition}`;
  }
}

const bodyError = (issue: { code?: string }) =>
  issue.code === 'unrecognized_keys'
    ? 'is not a writable field of a rule'
    : issue.code === 'invalid_type'
      ? 'must be a JSON object'
      : undefined;

/** POST /api/v1/alerts/rules. */
export const alertRuleCreateSchema = z
  .strictObject(
    {
      name: nameSchema,
      metric: metricSchema,
      condition: conditionSchema,
      threshold: thresholdSchema,
      duration_minutes: durationMinutesSchema.default(0),
      severity: severitySchema,
      channels: channelsSchema.default([]),
      scope: scopeSchema.default({}),
      enabled: enabledSchema.default(true),
      recovery_threshold: recoveryThresholdSchema.default(null),
      keep_firing_for_minutes: keepFiringForMinutesSchema.default(0),
      no_data_minutes: noDataMinutesSchema.default(null),
      no_data_state: noDataStateSchema.default('alerting'),
      renotify_minutes: renotifyMinutesSchema.default(null),
      message_template: messageTemplateSchema.default(null),
      flapping: flappingSchema.default(null),
    },
    { error: bodyError },
  )
  .superRefine((rule, ctx) => {
    const problem = recoveryThresholdProblem({
      condition: rule.condition,
      threshold: rule.threshold,
      recoveryThreshold: rule.recovery_threshold,
    });
    if (problem !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['recovery_threshold'],
        message: problem,
        input: rule.recovery_threshold,
      });
    }
  })
  .meta({ id: 'AlertRuleCreate' });
export type AlertRuleCreateRequest = z.infer<typeof alertRuleCreateSchema>;

/** PATCH /api/v1/alerts/rules/:id: any non-empty subset of the writable fields, no defaults. */
export const alertRuleUpdateSchema = z
  .strictObject(
    {
      name: nameSchema.optional(),
      metric: metricSchema.optional(),
      condition: conditionSchema.optional(),
      threshold: thresholdSchema.optional(),
      duration_minutes: durationMinutesSchema.optional(),
      severity: severitySchema.optional(),
      channels: channelsSchema.optional(),
      scope: scopeSchema.optional(),
      enabled: enabledSchema.optional(),
      recovery_threshold: recoveryThresholdSchema.optional(),
      keep_firing_for_minutes: keepFiringForMinutesSchema.optional(),
      no_data_minutes: noDataMinutesSchema.optional(),
      no_data_state: noDataStateSchema.optional(),
      renotify_minutes: renotifyMinutesSchema.optional(),
      message_template: messageTemplateSchema.optional(),
      flapping: flappingSchema.optional(),
    },
    { error: bodyError },
  )
  .refine((changes) => Object.keys(changes).length > 0, {
    error: 'must set at least one field',
    // Only when nothing else is wrong: `{ "colour": … }` is about the unknown field alone.
    when: (payload) => payload.issues.length === 0,
  })
  .meta({
    id: 'AlertRuleUpdate',
    description:
      'The fields to change; the others keep their value. `{}` is a 422. The rule as it would ' +
      'be stored is validated: a `recovery_threshold` left on the breaching side by a new ' +
      '`condition` or `threshold` is a 422 and nothing changes.',
    minProperties: 1,
  });
export type AlertRuleUpdateRequest = z.infer<typeof alertRuleUpdateSchema>;

const utcDateTime = z.iso.datetime().meta({ example: '2026-11-22T10:00:00.000Z' });

export const alertRuleSchema = z
  .object({
    id: z.string().meta({ example: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    name: z.string(),
    metric: z.string(),
    condition: z.enum(alertConditions),
    threshold: z.number(),
    duration_minutes: z.number().int().min(0).max(alertRuleLimits.maxDurationMinutes),
    severity: z.enum(alertSeverities),
    channels: z.array(z.enum(alertChannels)),
    scope: z.record(z.string(), z.string()),
    enabled: z.boolean(),
    recovery_threshold: z.number().nullable(),
    keep_firing_for_minutes: z.number().int().min(0).max(alertRuleLimits.maxKeepFiringForMinutes),
    no_data_minutes: z.number().int().min(1).max(alertRuleLimits.maxNoDataMinutes).nullable(),
    no_data_state: z.enum(noDataStates),
    renotify_minutes: z.number().int().min(1).max(alertRuleLimits.maxRenotifyMinutes).nullable(),
    message_template: z.string().nullable(),
    flapping: z
      .object({
        window_minutes: z.number().int().min(1).max(alertRuleLimits.maxFlappingWindowMinutes),
        max_transitions: z
          .number()
          .int()
          .min(alertRuleLimits.minFlappingTransitions)
          .max(alertRuleLimits.maxFlappingTransitions),
      })
      .nullable(),
    created_at: utcDateTime,
    updated_at: utcDateTime.meta({ description: 'Time of the last change.' }),
  })
  .meta({ id: 'AlertRule' });
export type AlertRuleResponse = z.infer<typeof alertRuleSchema>;

export const alertRuleListResponseSchema = z
  .object({ rules: z.array(alertRuleSchema), pagination: paginationSchema })
  .meta({ id: 'AlertRuleList' });
export type AlertRuleListResponse = z.infer<typeof alertRuleListResponseSchema>;

/** An alert rule as stored and evaluated: the API's rule with instants as `Date`. */
export type AlertRule = {
  id: string;
  name: string;
  metric: string;
  condition: AlertCondition;
  threshold: number;
  durationMinutes: number;
  severity: AlertSeverity;
  channels: AlertChannel[];
  /** Tag filter: the rule applies to services whose tags include every pair. */
  scope: Record<string, string>;
  enabled: boolean;
  /** null: the alert resolves against `threshold`. */
  recoveryThreshold: number | null;
  keepFiringForMinutes: number;
  /** null: no-data detection is off. */
  noDataMinutes: number | null;
  noDataState: NoDataState;
  /** null: never renotified. */
  renotifyMinutes: number | null;
  /** null: the default message. */
  messageTemplate: string | null;
  /** null: flap detection is off. */
  flapping: RuleFlapping | null;
  createdAt: Date;
  updatedAt: Date;
};

/** The fields of a rule its author writes (the rest the store assigns). */
export type AlertRuleFields = Omit<AlertRule, 'id' | 'createdAt' | 'updatedAt'>;

/** The rule options (docs/api.md#rule-options): each has a default. */
type AlertRuleOptions = Pick<
  AlertRule,
  | 'recoveryThreshold'
  | 'keepFiringForMinutes'
  | 'noDataMinutes'
  | 'noDataState'
  | 'renotifyMinutes'
  | 'messageTemplate'
  | 'flapping'
>;

/** What a rule that does not set them has: every rule option off. */
export const alertRuleOptionDefaults: Readonly<AlertRuleOptions> = {
  recoveryThreshold: null,
  keepFiringForMinutes: 0,
  noDataMinutes: null,
  noDataState: 'alerting',
  renotifyMinutes: null,
  messageTemplate: null,
  flapping: null,
};

/** A new rule's fields; the rule options default to `alertRuleOptionDefaults`. */
export type AlertRuleDraft = Omit<AlertRuleFields, keyof AlertRuleOptions> &
  Partial<AlertRuleOptions>;

/** Rule → wire. */
export function toAlertRuleResponse(rule: AlertRule): AlertRuleResponse {
  return {
    id: rule.id,
    name: rule.name,
    metric: rule.metric,
    condition: rule.condition,
    threshold: rule.threshold,
    duration_minutes: rule.durationMinutes,
    severity: rule.severity,
    channels: rule.channels,
    scope: rule.scope,
    enabled: rule.enabled,
    recovery_threshold: rule.recoveryThreshold,
    keep_firing_for_minutes: rule.keepFiringForMinutes,
    no_data_minutes: rule.noDataMinutes,
    no_data_state: rule.noDataState,
    renotify_minutes: rule.renotifyMinutes,
    message_template: rule.messageTemplate,
    flapping:
      rule.flapping === null
        ? null
        : {
            window_minutes: rule.flapping.windowMinutes,
            max_transitions: rule.flapping.maxTransitions,
          },
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}
