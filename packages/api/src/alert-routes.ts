import type { AlertQueries } from '@monitor/db';
import { isId, notFound } from '@monitor/platform';
import type { AlertListResponse, AlertResponse } from '@monitor/schemas';
import {
  alertListQuerySchema,
  alertListResponseSchema,
  alertSchema,
  parseAlertListQuery,
  toAlertResponse,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, idParams, json, problems } from './api-route.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf } from './require-scope.js';

const alertsPath = `${apiBasePath}/alerts`;
const alertPath = `${apiBasePath}/alerts/:id`;

export type AlertRouteDeps = {
  /** Reads of alerts. */
  alerts: AlertQueries;
};

/**
 * Alerts fired by the rules, in document order: serve them after the rules routes, whose
 * `/api/v1/alerts/rules` the `:id` pattern would match too.
 */
export const alertRoutes: readonly ApiRoute<AlertRouteDeps>[] = [
  {
    method: 'get',
    path: alertsPath,
    operationId: 'listAlerts',
    summary: 'List alerts',
    description:
      'The organization’s alerts, newest first (by id): the active ones unless `status` says ' +
      'otherwise. Filters combine with AND.',
    tags: ['alerts'],
    scope: 'read',
    request: { query: alertListQuerySchema },
    responses: {
      200: json('One page of alerts.', alertListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const parsed = queryOrThrow(parseAlertListQuery(query));
      const page = await deps.alerts.listAlerts({
        orgId: authOf(res).orgId,
        status: parsed.status,
        severity: parsed.severity,
        serviceId: parsed.service_id,
        ruleId: parsed.rule_id,
        limit: parsed.limit,
        offset: parsed.offset,
      });
      const body: AlertListResponse = {
        alerts: page.alerts.map(toAlertResponse),
        pagination: pageOf(parsed, page.alerts.length, page.total),
      };
      res.json(body);
    },
  },
  {
    method: 'get',
    path: alertPath,
    operationId: 'getAlert',
    summary: 'Get an alert',
    tags: ['alerts'],
    scope: 'read',
    request: { params: idParams('alr', 'alert') },
    responses: {
      200: json('The alert.', alertSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = params['id'];
      // A malformed id cannot name an alert: 404, exactly like an unknown one.
      const alert = isId('alr', id) ? await deps.alerts.getAlert(authOf(res).orgId, id) : undefined;
      if (alert === undefined) throw notFound('The alert');
      const body: AlertResponse = toAlertResponse(alert);
      res.json(body);
    },
  },
];
