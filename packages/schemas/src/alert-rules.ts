import { z } from 'zod';
import { alertConditions, alertSeverities, paginationSchema } from './api.js';
import type { AlertCondition, AlertSeverity } from './api.js';
import { ingestLimits, metricNamePattern } from './ingest.js';
import { keyNamesDocument, storableRecord, storableText } from './input-policy.js';

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
} as const;

const alertChannels = ['slack', 'email', 'webhook'] as const;
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
    },
    { error: bodyError },
  )
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
    description: 'The fields to change; the others keep their value. `{}` is a 422.',
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
  createdAt: Date;
  updatedAt: Date;
};

/** The fields of a rule its author writes (the rest the store assigns). */
export type AlertRuleFields = Omit<AlertRule, 'id' | 'createdAt' | 'updatedAt'>;

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
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}
