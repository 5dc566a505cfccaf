import { Router } from 'express';
import type { Router as ExpressRouter } from 'express';
import type {
  AlertQueries,
  InvestigationQueries,
  NotificationChannelStore,
  NotificationStore,
  RuleStore,
  ServiceQueries,
} from '@monitor/db';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { TargetAddressPolicy } from '@monitor/platform';
import { isId, methodNotAllowedHandler, notFound } from '@monitor/platform';
import type {
  QueryInput,
  ServiceDetailResponse,
  ServiceListResponse,
  ServiceMetricsResponse,
} from '@monitor/schemas';
import { parseServiceListQuery, parseServiceMetricsQuery } from '@monitor/schemas';
import { addAlertRuleRoutes } from './alert-rule-routes.js';
import { addAlertRoutes } from './alert-routes.js';
import { openApiPath, serviceMetricsPath, servicePath, servicesPath } from './api-operations.js';
import { addInvestigationRoutes } from './investigation-routes.js';
import { createOpenApiDocument } from './openapi-document.js';
import { databaseErrors } from './database-errors.js';
import { notificationRoutes } from './notification-routes.js';
import { pageOf } from './page-of.js';
import { createRoutesRouter } from './routes-router.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf, requireScope } from './require-scope.js';
import {
  toServiceDetailResponse,
  toServiceMetricsResponse,
  toServiceResponse,
} from './service-responses.js';

export type ApiRouterDeps = {
  /** Reads of the services projection, snapshots, alerts and aggregates. */
  services: ServiceQueries;
  /** Alert rules: reads, and changes that evaluators pick up. */
  rules: RuleStore;
  /** Reads of alerts. */
  alerts: AlertQueries;
  /** Reads of investigations, and opening one on demand. */
  investigations: InvestigationQueries;
  /** Resolves API keys (cached); a lookup that throws is a dependency failure (503). */
  authenticator: ApiKeyAuthenticator;
  /**
   * The clock of staleness, of the metrics defaults, of the resolution time of alerts a rule
   * change resolves and of the investigation range check; `Date.now` when omitted.
   */
  nowMs?: () => number;
  /** The organizations' notification targets. */
  channels: NotificationChannelStore;
  /** The outbox, read for an alert's delivery record. */
  notifications: Pick<NotificationStore, 'listForAlert'>;
  /** Retry-After of a 503 when the database is unreachable (default 5). */
  retryAfterSeconds?: number;
  /** Which addresses notification targets may lead to (the notifier's policy). */
  targetPolicy: TargetAddressPolicy;
};

/**
 * The REST API under `/api/v1` (absolute paths: mount it with `app.use(router)`): services,
 * alert rules, alerts and investigations (GETs behind the `read` scope, changes behind
 * `write`), and the public OpenAPI document. A known path with another method is 405 with
 * `Allow`. Errors go to the app's problem handler; database connection failures become 503 on
 * the way.
 */
export function createApiRouter(deps: ApiRouterDeps): ExpressRouter {
  const router = Router();
  const nowMs = deps.nowMs ?? Date.now;
  const read = requireScope(deps.authenticator, 'read');
  const write = requireScope(deps.authenticator, 'write');
  const getOnly = methodNotAllowedHandler(['GET']);
  // Generated once: the schemas do not change while the process runs.
  const document = JSON.stringify(createOpenApiDocument());

  router
    .route(openApiPath)
    .get((_req, res) => {
      res.type('application/json').send(document);
    })
    .all(getOnly);

  router
    .route(servicesPath)
    .get(read, async (req, res) => {
      const query = queryOrThrow(parseServiceListQuery(req.query as QueryInput));
      const { services, total } = await deps.services.listServices({
        orgId: authOf(res).orgId,
        status: query.status,
        tags: query.tags,
        limit: query.limit,
        offset: query.offset,
        now: new Date(nowMs()),
      });
      const body: ServiceListResponse = {
        services: services.map(toServiceResponse),
        pagination: pageOf(query, services.length, total),
      };
      res.json(body);
    })
    .all(getOnly);

  router
    .route(servicePath)
    .get(read, async (req, res) => {
      const id = serviceIdOf(req.params['id']);
      const service = await deps.services.getService({
        orgId: authOf(res).orgId,
        id,
        now: new Date(nowMs()),
      });
      if (service === undefined) throw serviceNotFound();
      const body: ServiceDetailResponse = toServiceDetailResponse(service);
      res.json(body);
    })
    .all(getOnly);

  router
    .route(serviceMetricsPath)
    .get(read, async (req, res) => {
      const id = serviceIdOf(req.params['id']);
      const now = nowMs();
      const query = queryOrThrow(parseServiceMetricsQuery(req.query as QueryInput, now));
      const rows = await deps.services.readMetricSeries({
        orgId: authOf(res).orgId,
        serviceId: id,
        ...query,
        now: new Date(now),
      });
      if (rows === undefined) throw serviceNotFound();
      const body: ServiceMetricsResponse = toServiceMetricsResponse(query, rows);
      res.json(body);
    })
    .all(getOnly);

  // Rules first: `/api/v1/alerts/:id` would match `/api/v1/alerts/rules` too.
  addAlertRuleRoutes(router, { rules: deps.rules, read, write, nowMs });
  addAlertRoutes(router, { alerts: deps.alerts, read });
  addInvestigationRoutes(router, { investigations: deps.investigations, read, write, nowMs });

  router.use(
    createRoutesRouter(notificationRoutes, {
      deps,
      authenticator: deps.authenticator,
      retryAfterSeconds: deps.retryAfterSeconds ?? 5,
    }),
  );
  router.use(databaseErrors(deps.retryAfterSeconds ?? 5));
  return router;
}

function serviceNotFound() {
  return notFound('The service');
}

/** A malformed id cannot name a service: 404, exactly like an unknown one. */
function serviceIdOf(value: string | string[] | undefined): string {
  if (!isId('svc', value)) throw serviceNotFound();
  return value;
}
