import { z } from 'zod';
import type { AlertSeverity } from './api.js';
import {
  alertSeverities,
  idPattern,
  paginationQuerySchema,
  paginationSchema,
  queryEnum,
} from './api.js';
import { ingestLimits } from './ingest.js';
import { keyNamesDocument, storableRecord, storableText } from './input-policy.js';
import { maxHostNameLength } from './host-name.js';

/**
 * Wire formats of `/api/v1/silences` (docs/api.md#silences). A silence acts on
 * notifications only: matching alerts still fire, resolve and open investigations.
 */

const silenceLimits = {
  maxCommentLength: 2000,
  maxHostLength: maxHostNameLength,
  maxRruleLength: 1000,
  maxTimezoneLength: 64,
  minRecurrenceMinutes: 1,
  maxRecurrenceMinutes: 10_080,
  maxTagPairs: ingestLimits.maxTags,
} as const;

const silenceStates = ['active', 'pending', 'expired'] as const;
export type SilenceState = (typeof silenceStates)[number];

const typeError = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${what}`;

const dateTimeInput = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time such as 2026-11-24T02:00:00Z' })
  .meta({ example: '2026-11-24T02:00:00Z' });

const idInput = (prefix: string) =>
  z
    .string({ error: typeError('a string') })
    .regex(idPattern(prefix), { error: `must be an id of the form ${prefix}_<ULID>` });

const tagKeyMessage = `must be 1 to ${ingestLimits.maxTagKeyLength} characters`;

const matchersSchema = z
  .strictObject(
    {
      host: storableText(
        z
          .string({ error: typeError('a string') })
          .min(1, { error: `must be 1 to ${silenceLimits.maxHostLength} characters` })
          .max(silenceLimits.maxHostLength, {
            error: `must be 1 to ${silenceLimits.maxHostLength} characters`,
          }),
      )
        .optional()
        .meta({ description: 'The alert’s host.' }),
      service_id: idInput('svc').optional().meta({ description: 'The alert’s service.' }),
      rule_id: idInput('rul').optional().meta({ description: 'The alert’s rule.' }),
      severity: z
        .enum(alertSeverities, { error: `must be one of ${alertSeverities.join(', ')}` })
        .optional()
        .meta({ description: 'The alert’s severity.' }),
      tags: storableRecord(
        z.string().min(1, { error: tagKeyMessage }).max(ingestLimits.maxTagKeyLength, {
          error: tagKeyMessage,
        }),
        storableText(
          z.string({ error: 'must be a string' }).max(ingestLimits.maxTagValueLength, {
            error: `must be at most ${ingestLimits.maxTagValueLength} characters`,
          }),
        ),
        { typeMessage: 'must be an object of strings' },
      )
        .refine((tags) => Object.keys(tags).length <= silenceLimits.maxTagPairs, {
          error: `must have at most ${silenceLimits.maxTagPairs} pairs`,
        })
        .optional()
        .meta({
          description: 'Tags the alert’s service must have (every pair).',
          maxProperties: silenceLimits.maxTagPairs,
          propertyNames: keyNamesDocument({
            minLength: 1,
            maxLength: ingestLimits.maxTagKeyLength,
          }),
        }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'is not a matcher (host, service_id, rule_id, severity, tags)'
          : issue.code === 'invalid_type'
            ? issue.input === undefined
              ? 'is required'
              : 'must be an object'
            : undefined,
    },
  )
  .refine(
    (matchers) =>
      Object.entries(matchers).some(
        ([name, value]) =>
          value !== undefined && (name !== 'tags' || Object.keys(value as object).length > 0),
      ),
    { error: 'must set at least one matcher', when: (payload) => payload.issues.length === 0 },
  )
  .meta({
    description:
      'Which alerts the silence matches: every given matcher must match (tags: every pair). ' +
      'At least one.',
    minProperties: 1,
  });

const recurrenceSchema = z
  .strictObject(
    {
      rrule: z
        .string({ error: typeError('a string') })
        .min(1, { error: 'must not be empty' })
        .max(silenceLimits.maxRruleLength, {
          error: `must be at most ${silenceLimits.maxRruleLength} characters`,
        })
        .regex(/^[A-Za-z0-9=;,:+-]+$/, {
          error: 'must be an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SU;BYHOUR=2',
        })
        .meta({
          description:
            'An RFC 5545 RRULE (without DTSTART: it is `starts_at`); local times such as ' +
            '`BYHOUR` are read in `timezone`.',
          example: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0',
        }),
      duration_minutes: z
        .number({ error: typeError('an integer') })
        .int({ error: `must be an integer from 1 to ${silenceLimits.maxRecurrenceMinutes}` })
        .min(silenceLimits.minRecurrenceMinutes, {
          error: `must be an integer from 1 to ${silenceLimits.maxRecurrenceMinutes}`,
        })
        .max(silenceLimits.maxRecurrenceMinutes, {
          error: `must be an integer from 1 to ${silenceLimits.maxRecurrenceMinutes}`,
        })
        .meta({ description: 'How long each window lasts from its occurrence.' }),
      timezone: z
        .string({ error: typeError('a string') })
        .min(1, { error: 'must be an IANA time zone such as Europe/Berlin' })
        .max(silenceLimits.maxTimezoneLength, {
          error: 'must be an IANA time zone such as Europe/Berlin',
        })
        .regex(/^[A-Za-z0-9_+/-]+$/, { error: 'must be an IANA time zone such as Europe/Berlin' })
        .meta({ description: 'An IANA time zone.', example: 'Europe/Berlin' }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'is not a field of recurrence'
          : issue.code === 'invalid_type'
            ? 'must be an object or null'
            : undefined,
    },
  )
  .nullable()
  .meta({
    description:
      'Makes the silence a recurring maintenance window: in force for `duration_minutes` from ' +
      'each occurrence between `starts_at` and `ends_at`. null: in force from `starts_at` to ' +
      '`ends_at`.',
  });

/** POST /api/v1/silences. */
export const silenceCreateSchema = z
  .strictObject(
    {
      matchers: matchersSchema,
      starts_at: dateTimeInput,
      ends_at: dateTimeInput.meta({ description: 'Must be after `starts_at`.' }),
      comment: storableText(
        z.string({ error: typeError('a string') }).max(silenceLimits.maxCommentLength, {
          error: `must be at most ${silenceLimits.maxCommentLength} characters`,
        }),
      ).meta({ description: 'Why (who is working on what).' }),
      recurrence: recurrenceSchema.default(null),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'is not a writable field of a silence'
          : issue.code === 'invalid_type'
            ? 'must be a JSON object'
            : undefined,
    },
  )
  .superRefine((silence, ctx) => {
    if (Date.parse(silence.ends_at) <= Date.parse(silence.starts_at)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ends_at'],
        message: 'must be after starts_at',
        input: silence.ends_at,
      });
    }
  })
  .meta({ id: 'SilenceCreate' });
export type SilenceCreateRequest = z.infer<typeof silenceCreateSchema>;

const utcDateTime = z.iso.datetime().meta({ example: '2026-11-24T02:00:00.000Z' });

export const silenceSchema = z
  .object({
    id: z.string().meta({ example: 'sil_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    matchers: z.object({
      host: z.string().optional(),
      service_id: z.string().optional(),
      rule_id: z.string().optional(),
      severity: z.enum(alertSeverities).optional(),
      tags: z.record(z.string(), z.string()).optional(),
    }),
    starts_at: utcDateTime,
    ends_at: utcDateTime.meta({
      description: 'When it ends; moved to the time of deletion by DELETE.',
    }),
    comment: z.string(),
    recurrence: z
      .object({
        rrule: z.string(),
        duration_minutes: z.number().int().min(1).max(silenceLimits.maxRecurrenceMinutes),
        timezone: z.string(),
      })
      .nullable(),
    state: z.enum(silenceStates).meta({
      description:
        'Now: `active` while in force, `pending` before it starts or between the windows of a ' +
        'recurrence, `expired` from `ends_at` on.',
    }),
    created_at: utcDateTime,
    created_by: z.string().meta({ description: 'The id of the API key that created it.' }),
  })
  .meta({ id: 'Silence' });
export type SilenceResponse = z.infer<typeof silenceSchema>;

export const silenceListQuerySchema = paginationQuerySchema.extend({
  state: queryEnum(silenceStates)
    .optional()
    .meta({ description: 'Only silences in this state now. Default: active and pending.' }),
});

export const silenceListResponseSchema = z
  .object({ silences: z.array(silenceSchema), pagination: paginationSchema })
  .meta({ id: 'SilenceList' });
export type SilenceListResponse = z.infer<typeof silenceListResponseSchema>;

/** Matchers as every package passes them around (camelCase, absent = not matched on). */
export type SilenceMatchers = {
  host?: string;
  serviceId?: string;
  ruleId?: string;
  severity?: AlertSeverity;
  tags?: Record<string, string>;
};

export type SilenceRecurrence = { rrule: string; durationMinutes: number; timezone: string };

/** A silence as stored. */
export type Silence = {
  id: string;
  matchers: SilenceMatchers;
  startsAt: Date;
  endsAt: Date;
  comment: string;
  recurrence: SilenceRecurrence | null;
  createdAt: Date;
  /** The API key id that created it. */
  createdBy: string;
};

/** Wire → domain matchers. */
export function toSilenceMatchers(matchers: SilenceCreateRequest['matchers']): SilenceMatchers {
  const result: SilenceMatchers = {};
  if (matchers.host !== undefined) result.host = matchers.host;
  if (matchers.service_id !== undefined) result.serviceId = matchers.service_id;
  if (matchers.rule_id !== undefined) result.ruleId = matchers.rule_id;
  if (matchers.severity !== undefined) result.severity = matchers.severity;
  if (matchers.tags !== undefined) result.tags = matchers.tags;
  return result;
}

/** Silence → wire, with its state at the time of the answer. */
export function toSilenceResponse(silence: Silence, state: SilenceState): SilenceResponse {
  const { matchers } = silence;
  return {
    id: silence.id,
    matchers: {
      ...(matchers.host === undefined ? {} : { host: matchers.host }),
      ...(matchers.serviceId === undefined ? {} : { service_id: matchers.serviceId }),
      ...(matchers.ruleId === undefined ? {} : { rule_id: matchers.ruleId }),
      ...(matchers.severity === undefined ? {} : { severity: matchers.severity }),
      ...(matchers.tags === undefined ? {} : { tags: matchers.tags }),
    },
    starts_at: silence.startsAt.toISOString(),
    ends_at: silence.endsAt.toISOString(),
    comment: silence.comment,
    recurrence:
      silence.recurrence === null
        ? null
        : {
            rrule: silence.recurrence.rrule,
            duration_minutes: silence.recurrence.durationMinutes,
            timezone: silence.recurrence.timezone,
          },
    state,
    created_at: silence.createdAt.toISOString(),
    created_by: silence.createdBy,
  };
}
