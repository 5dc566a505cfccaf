import type { RequestHandler, Router } from 'express';
import type { AlertQueries } from '@monitor/db';
import { isId, methodNotAllowedHandler, notFound } from '@monitor/platform';
import type { AlertListResponse, AlertResponse, QueryInput } from '@monitor/schemas';
import { parseAlertListQuery, toAlertResponse } from '@monitor/schemas';
import { alertPath, alertsPath } from './api-operations.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf } from './require-scope.js';

export type AlertRoutesDeps = {
  alerts: AlertQueries;
  /** Authenticates a key with the `read` scope. */
  read: RequestHandler;
};

/**
 * `/api/v1/alerts` and `/api/v1/alerts/:id`, registered on `router`: register them after the
 * rules routes, whose `/api/v1/alerts/rules` the `:id` pattern would match too.
 */
export function addAlertRoutes(router: Router, deps: AlertRoutesDeps): void {
  const { alerts, read } = deps;
  const getOnly = methodNotAllowedHandler(['GET']);

  router
    .route(alertsPath)
    .get(read, async (req, res) => {
      const query = queryOrThrow(parseAlertListQuery(req.query as QueryInput));
      const page = await alerts.listAlerts({
        orgId: authOf(res).orgId,
        status: query.status,
        severity: query.severity,
        serviceId: query.service_id,
        ruleId: query.rule_id,
        limit: query.limit,
        offset: query.offset,
      });
      const body: AlertListResponse = {
        alerts: page.alerts.map(toAlertResponse),
        pagination: pageOf(query, page.alerts.length, page.total),
      };
      res.json(body);
    })
    .all(getOnly);

  router
    .route(alertPath)
    .get(read, async (req, res) => {
      const id = req.params['id'];
      // A malformed id cannot name an alert: 404, exactly like an unknown one.
      const alert = isId('alr', id) ? await alerts.getAlert(authOf(res).orgId, id) : undefined;
      if (alert === undefined) throw notFound('The alert');
      const body: AlertResponse = toAlertResponse(alert);
      res.json(body);
    })
    .all(getOnly);
}
