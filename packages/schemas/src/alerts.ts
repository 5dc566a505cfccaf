import { z } from 'zod';
import type { QueryInput, QueryParseResult } from './api.js';
import {
  alertSchema,
  alertSeverities,
  paginationQuerySchema,
  paginationSchema,
  parseQuery,
  queryEnum,
  queryId,
} from './api.js';

/** Wire formats of `GET /api/v1/alerts` and `GET /api/v1/alerts/:id` (the item is `alertSchema`). */

/** `all` means both statuses. */
export const alertStatusFilters = ['active', 'resolved', 'all'] as const;
export type AlertStatusFilter = (typeof alertStatusFilters)[number];

export const alertListQuerySchema = paginationQuerySchema.extend({
  status: queryEnum(alertStatusFilters)
    .default('active')
    .meta({ description: 'Active alerts (the default), resolved ones, or all.' }),
  severity: queryEnum(alertSeverities).optional().meta({ description: 'Only this severity.' }),
  service_id: queryId('svc').optional().meta({ description: 'Only alerts of this service.' }),
  rule_id: queryId('rul')
    .optional()
    .meta({ description: 'Only alerts of this rule (a deleted rule’s alerts included).' }),
});
export type AlertListQuery = z.output<typeof alertListQuerySchema>;

/** Query parameters of `GET /api/v1/alerts`; unknown parameters are ignored. */
export function parseAlertListQuery(query: QueryInput): QueryParseResult<AlertListQuery> {
  return parseQuery(alertListQuerySchema, query);
}

export const alertListResponseSchema = z
  .object({ alerts: z.array(alertSchema), pagination: paginationSchema })
  .meta({ id: 'AlertList' });
export type AlertListResponse = z.infer<typeof alertListResponseSchema>;
