import { z } from 'zod';
import type { BodyIssue, BodyParseResult, QueryInput, QueryParseResult } from './api.js';
import {
  idPattern,
  paginationQuerySchema,
  paginationSchema,
  parseBody,
  parseQuery,
  queryEnum,
  queryId,
} from './api.js';
import { ingestLimits } from './ingest.js';

/**
 * Wire formats of `/api/v1/investigations`: the list and its query, the detail, and the body
 * that opens one on demand; and the report an investigation completes with (`InvestigationReport`),
 * which the investigator builds, the database stores as it is and the detail returns.
 */

const investigationStatuses = ['queued', 'running', 'completed', 'failed'] as const;
export type InvestigationStatus = (typeof investigationStatuses)[number];

const recommendationPriorities = ['high', 'medium', 'low'] as const;

/** Bounds of an on-demand investigation's window. */
const investigationLimits = {
  maxWindowMs: 7 * 24 * 60 * 60_000,
  /** `to` may lie this far ahead of now (clock skew), like an ingested sample's time. */
  maxFutureSkewMs: ingestLimits.maxFutureSkewMs,
} as const;

const utcDateTime = z.iso.datetime().meta({ example: '2026-11-22T10:00:00.000Z' });

const findingSchema = z
  .object({
    title: z.string(),
    detail: z.string(),
    evidence: z.record(z.string(), z.unknown()).meta({
      description:
        'What the finding rests on, drawn from stored data: the numbers and the window they ' +
        'come from (metric windows, process and container snapshots, other alerts).',
    }),
  })
  .meta({ id: 'InvestigationFinding' });
export type InvestigationFinding = z.infer<typeof findingSchema>;

const analysisSchema = z
  .object({
    summary: z.string(),
    root_cause: z.string().meta({
      description: 'The most likely cause, or `inconclusive` when the evidence is too weak.',
    }),
    confidence: z.number().min(0).max(1),
    method: z.string().meta({
      description: 'How the analysis was made, e.g. `statistical` or `statistical+llm:<model>`.',
    }),
  })
  .meta({ id: 'InvestigationAnalysis' });
export type InvestigationAnalysis = z.infer<typeof analysisSchema>;

const timelineEventSchema = z
  .object({
    at: utcDateTime,
    type: z.string().meta({ description: 'The kind of event, e.g. `alert_fired`.' }),
    description: z.string(),
    data: z.record(z.string(), z.unknown()).meta({ description: 'The event’s stored data.' }),
  })
  .meta({ id: 'InvestigationTimelineEvent' });
export type InvestigationTimelineEvent = z.infer<typeof timelineEventSchema>;

const recommendationSchema = z
  .object({
    title: z.string(),
    detail: z.string(),
    priority: z.enum(recommendationPriorities),
  })
  .meta({ id: 'InvestigationRecommendation' });
export type InvestigationRecommendation = z.infer<typeof recommendationSchema>;

/** What a completed investigation holds, in the detail's shapes (timeline in time order). */
export type InvestigationReport = {
  findings: InvestigationFinding[];
  analysis: InvestigationAnalysis;
  timeline: InvestigationTimelineEvent[];
  recommendations: InvestigationRecommendation[];
};

const investigationSchema = z
  .object({
    id: z.string().meta({ example: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    alert_id: z
      .string()
      .nullable()
      .meta({ description: 'The alert investigated; null for a service and time range.' }),
    service_id: z.string(),
    title: z.string(),
    status: z.enum(investigationStatuses).meta({
      description: '`queued` → `running` → `completed` or `failed`.',
    }),
    findings: z
      .array(findingSchema)
      .meta({ description: 'What the investigation found, each with its evidence.' }),
    created_at: utcDateTime,
    updated_at: utcDateTime,
    completed_at: utcDateTime
      .nullable()
      .meta({ description: 'When it completed or failed; null before.' }),
  })
  .meta({ id: 'Investigation' });
export type InvestigationResponse = z.infer<typeof investigationSchema>;

export const investigationDetailSchema = investigationSchema
  .extend({
    analysis: analysisSchema
      .nullable()
      .meta({ description: 'Null until the investigation has completed.' }),
    timeline: z
      .array(timelineEventSchema)
      .meta({ description: 'The incident’s events in time order.' }),
    recommendations: z.array(recommendationSchema),
  })
  .meta({ id: 'InvestigationDetail' });
export type InvestigationDetailResponse = z.infer<typeof investigationDetailSchema>;

export const investigationListResponseSchema = z
  .object({ investigations: z.array(investigationSchema), pagination: paginationSchema })
  .meta({ id: 'InvestigationList' });
export type InvestigationListResponse = z.infer<typeof investigationListResponseSchema>;

export const investigationListQuerySchema = paginationQuerySchema.extend({
  status: queryEnum(investigationStatuses).optional().meta({ description: 'Only this status.' }),
  alert_id: queryId('alr')
    .optional()
    .meta({ description: 'Only the investigation of this alert.' }),
  service_id: queryId('svc')
    .optional()
    .meta({ description: 'Only investigations of this service.' }),
});
export type InvestigationListQuery = z.output<typeof investigationListQuerySchema>;

/** Query parameters of `GET /api/v1/investigations`; unknown parameters are ignored. */
export function parseInvestigationListQuery(
  query: QueryInput,
): QueryParseResult<InvestigationListQuery> {
  return parseQuery(investigationListQuerySchema, query);
}

// ---- POST /api/v1/investigations -----------------------------------------------------------

const bodyId = (prefix: string) =>
  z
    .string({ error: 'must be a string' })
    .regex(idPattern(prefix), { error: `must be an id of the form ${prefix}_<ULID>` });

const bodyDateTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' })
  .meta({ example: '2026-11-22T10:00:00Z' });

const windowMessage = `must be at most ${investigationLimits.maxWindowMs / 86_400_000} days after from`;

/**
 * The body as validated: one object with every field optional, so each problem is reported at
 * its own path (a union would only say that no alternative matched). `parseInvestigationRequest`
 * checks which form it is.
 */
const investigationCreateSchema = z.strictObject(
  {
    alert_id: bodyId('alr').optional(),
    service_id: bodyId('svc').optional(),
    from: bodyDateTime.optional(),
    to: bodyDateTime.optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? 'is not a field of this body'
        : issue.code === 'invalid_type'
          ? 'must be a JSON object'
          : undefined,
  },
);

/** The body as documented: exactly one of the two forms. */
export const investigationCreateDocumentSchema = z
  .union([
    z
      .strictObject({ alert_id: bodyId('alr') })
      .meta({ title: 'Investigate an alert', description: 'Its window: started_at..fired_at.' }),
    z.strictObject({ service_id: bodyId('svc'), from: bodyDateTime, to: bodyDateTime }).meta({
      title: 'Investigate a service over a time range',
      description:
        '`from` before `to`, at most 7 days apart; `to` at most 10 minutes in the future.',
    }),
  ])
  .meta({ id: 'InvestigationCreate' });

/** What a valid body asks for. */
export type InvestigationRequest =
  { kind: 'alert'; alertId: string } | { kind: 'service'; serviceId: string; from: Date; to: Date };

/**
 * `{ alert_id }` or `{ service_id, from, to }` with `from < to`, at most 7 days apart and `to`
 * not in the future beyond clock skew (at `nowMs`). Unknown fields, a mix of both forms and a
 * missing field are issues at their paths.
 */
export function parseInvestigationRequest(
  body: unknown,
  nowMs: number,
): BodyParseResult<InvestigationRequest> {
  const result = parseBody(investigationCreateSchema, body);
  if (!result.success) return result;
  const { alert_id: alertId, service_id: serviceId, from, to } = result.data;
  const fail = (issues: BodyIssue[]): BodyParseResult<InvestigationRequest> => ({
    success: false,
    issues,
  });
  if (alertId !== undefined) {
    const mixed = (['service_id', 'from', 'to'] as const).filter(
      (field) => result.data[field] !== undefined,
    );
    if (mixed.length > 0) {
      return fail(
        mixed.map((field) => ({ path: [field], message: 'is not allowed with alert_id' })),
      );
    }
    return { success: true, data: { kind: 'alert', alertId } };
  }
  if (serviceId === undefined || from === undefined || to === undefined) {
    const missing = (['service_id', 'from', 'to'] as const).filter(
      (field) => result.data[field] === undefined,
    );
    const message =
      serviceId === undefined && from === undefined && to === undefined
        ? 'must give alert_id, or service_id with from and to'
        : undefined;
    return fail(
      message === undefined
        ? missing.map((field) => ({ path: [field], message: 'is required' }))
        : [{ path: [], message }],
    );
  }
  const fromMs = Date.parse(from);
  const toMs = Date.parse(to);
  if (toMs <= fromMs) return fail([{ path: ['to'], message: 'must be after from' }]);
  if (toMs - fromMs > investigationLimits.maxWindowMs) {
    return fail([{ path: ['to'], message: windowMessage }]);
  }
  if (toMs > nowMs + investigationLimits.maxFutureSkewMs) {
    return fail([{ path: ['to'], message: 'must not be in the future' }]);
  }
  return {
    success: true,
    data: { kind: 'service', serviceId, from: new Date(fromMs), to: new Date(toMs) },
  };
}
