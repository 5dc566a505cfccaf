import { authenticatedKey } from '@monitor/auth';
import type { AlertQueries } from '@monitor/db';
import { isId, notFound } from '@monitor/platform';
import type { AlertListResponse, AlertResponse } from '@monitor/schemas';
import {
  alertAcknowledgeSchema,
  alertListQuerySchema,
  alertListResponseSchema,
  alertSchema,
  parseAlertListQuery,
  parseBody,
  toAlertResponse,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, idParams, json, problems } from './api-route.js';
import { bodyOrThrow } from './body-or-throw.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';

const alertsPath = `${apiBasePath}/alerts`;
const alertPath = `${apiBasePath}/alerts/:id`;
const acknowledgePath = `${apiBasePath}/alerts/:id/acknowledge`;

export type AlertRouteDeps = {
  /** Reads of alerts, and their acknowledgement. */
  alerts: AlertQueries;
  /** The instant `silenced` is judged at, and the time of an acknowledgement. */
  nowMs: () => number;
};

const alertIdParams = idParams('alr', 'alert');

/** A malformed id cannot name an alert: 404, exactly like an unknown one. */
function alertIdOf(value: string | string[] | undefined): string {
  if (!isId('alr', value)) throw notFound('The alert');
  return value;
}

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
      'otherwise. Filters combine with AND. `silenced` is judged against the silences in ' +
      'force at the time of the request.',
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
        orgId: authenticatedKey(res).orgId,
        status: parsed.status,
        severity: parsed.severity,
        serviceId: parsed.service_id,
        ruleId: parsed.rule_id,
        acknowledged: parsed.acknowledged,
        silenced: parsed.silenced,
        reason: parsed.reason,
        now: new Date(deps.nowMs()),
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
    request: { params: alertIdParams },
    responses: {
      200: json('The alert.', alertSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = alertIdOf(params['id']);
      const alert = await deps.alerts.getAlert(
        authenticatedKey(res).orgId,
        id,
        new Date(deps.nowMs()),
      );
      if (alert === undefined) throw notFound('The alert');
      const body: AlertResponse = toAlertResponse(alert);
      res.json(body);
    },
  },
  {
    method: 'post',
    path: acknowledgePath,
    operationId: 'acknowledgeAlert',
    summary: 'Acknowledge an alert',
    description:
      'Someone is on it: an acknowledged alert is not renotified (`renotify_minutes`). ' +
      'Acknowledging again answers 200 and keeps the first acknowledgement (time, key and ' +
      'comment). A resolved alert can be acknowledged.',
    tags: ['alerts'],
    scope: 'write',
    request: {
      params: alertIdParams,
      body: {
        schema: alertAcknowledgeSchema,
        description: 'An optional comment; the body may be left out.',
        optional: true,
      },
    },
    checkPath: (params) => {
      alertIdOf(params['id']);
    },
    responses: {
      200: json('The alert, acknowledged.', alertSchema),
      ...problems(401, 403, 404, 413, 415, 422, 503),
    },
    handle: async ({ params, body, res, deps }) => {
      const id = alertIdOf(params['id']);
      const request = bodyOrThrow(parseBody(alertAcknowledgeSchema, body ?? {}));
      const { orgId, keyId } = authenticatedKey(res);
      const alert = await deps.alerts.acknowledgeAlert({
        orgId,
        alertId: id,
        keyId,
        comment: request.comment ?? null,
        now: new Date(deps.nowMs()),
      });
      if (alert === undefined) throw notFound('The alert');
      const response: AlertResponse = toAlertResponse(alert);
      res.json(response);
    },
  },
  {
    method: 'delete',
    path: acknowledgePath,
    operationId: 'unacknowledgeAlert',
    summary: 'Undo an alert’s acknowledgement',
    description: 'Renotification resumes. Idempotent: 200 whether or not it was acknowledged.',
    tags: ['alerts'],
    scope: 'write',
    request: { params: alertIdParams },
    responses: {
      200: json('The alert, unacknowledged.', alertSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = alertIdOf(params['id']);
      const alert = await deps.alerts.unacknowledgeAlert(
        authenticatedKey(res).orgId,
        id,
        new Date(deps.nowMs()),
      );
      if (alert === undefined) throw notFound('The alert');
      const response: AlertResponse = toAlertResponse(alert);
      res.json(response);
    },
  },
];
