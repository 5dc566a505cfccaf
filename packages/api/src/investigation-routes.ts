import type { RequestHandler, Router } from 'express';
import type { InvestigationQueries } from '@monitor/db';
import { isId, methodNotAllowedHandler, notFound, validationError } from '@monitor/platform';
import type {
  InvestigationDetailResponse,
  InvestigationListResponse,
  QueryInput,
} from '@monitor/schemas';
import { parseInvestigationListQuery, parseInvestigationRequest } from '@monitor/schemas';
import { investigationPath, investigationsPath } from './api-operations.js';
import { bodyOrThrow } from './body-or-throw.js';
import {
  toInvestigationDetailResponse,
  toInvestigationResponse,
} from './investigation-responses.js';
import { jsonBody } from './json-body.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf } from './require-scope.js';

export type InvestigationRoutesDeps = {
  investigations: InvestigationQueries;
  /** Authenticates a key with the `read` scope. */
  read: RequestHandler;
  /** Authenticates a key with the `write` scope. */
  write: RequestHandler;
  nowMs: () => number;
};

/** `/api/v1/investigations` and `/api/v1/investigations/:id`, registered on `router`. */
export function addInvestigationRoutes(router: Router, deps: InvestigationRoutesDeps): void {
  const { investigations, read, write, nowMs } = deps;

  router
    .route(investigationsPath)
    .get(read, async (req, res) => {
      const query = queryOrThrow(parseInvestigationListQuery(req.query as QueryInput));
      const page = await investigations.listInvestigations({
        orgId: authOf(res).orgId,
        status: query.status,
        alertId: query.alert_id,
        serviceId: query.service_id,
        limit: query.limit,
        offset: query.offset,
      });
      const body: InvestigationListResponse = {
        investigations: page.investigations.map(toInvestigationResponse),
        pagination: pageOf(query, page.investigations.length, page.total),
      };
      res.json(body);
    })
    .post(write, ...jsonBody, async (req, res) => {
      const request = bodyOrThrow(parseInvestigationRequest(req.body as unknown, nowMs()));
      const orgId = authOf(res).orgId;
      // What the body names must exist in the org: otherwise the body is invalid (422), the
      // route itself exists (not 404).
      const investigation =
        request.kind === 'alert'
          ? await investigations.openForAlert(orgId, request.alertId)
          : await investigations.openForService({
              orgId,
              serviceId: request.serviceId,
              from: request.from,
              to: request.to,
            });
      if (investigation === undefined) {
        throw request.kind === 'alert'
          ? validationError([{ path: 'alert_id', message: 'names no alert of this organization' }])
          : validationError([
              { path: 'service_id', message: 'names no service of this organization' },
            ]);
      }
      const body: InvestigationDetailResponse = toInvestigationDetailResponse(investigation);
      res.status(202).location(`${investigationsPath}/${investigation.id}`).json(body);
    })
    .all(methodNotAllowedHandler(['GET', 'POST']));

  router
    .route(investigationPath)
    .get(read, async (req, res) => {
      const id = req.params['id'];
      // A malformed id cannot name an investigation: 404, exactly like an unknown one.
      const investigation = isId('inv', id)
        ? await investigations.getInvestigation(authOf(res).orgId, id)
        : undefined;
      if (investigation === undefined) throw notFound('The investigation');
      const body: InvestigationDetailResponse = toInvestigationDetailResponse(investigation);
      res.json(body);
    })
    .all(methodNotAllowedHandler(['GET']));
}
