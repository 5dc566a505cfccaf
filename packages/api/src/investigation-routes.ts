import { authenticatedKey } from '@monitor/auth';
import type { InvestigationQueries } from '@monitor/db';
import { isId, notFound, validationError } from '@monitor/platform';
import type { InvestigationDetailResponse, InvestigationListResponse } from '@monitor/schemas';
import {
  investigationCreateDocumentSchema,
  investigationDetailSchema,
  investigationListQuerySchema,
  investigationListResponseSchema,
  parseInvestigationListQuery,
  parseInvestigationRequest,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, created, idParams, json, problems } from './api-route.js';
import { bodyOrThrow } from './body-or-throw.js';
import {
  toInvestigationDetailResponse,
  toInvestigationResponse,
} from './investigation-responses.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';

const investigationsPath = `${apiBasePath}/investigations`;
const investigationPath = `${apiBasePath}/investigations/:id`;

export type InvestigationRouteDeps = {
  /** Reads of investigations, and opening one on demand. */
  investigations: InvestigationQueries;
  /** The clock of the range check of a service investigation. */
  nowMs: () => number;
};

/** Automated analyses of an alert or of a service over a time range, in document order. */
export const investigationRoutes: readonly ApiRoute<InvestigationRouteDeps>[] = [
  {
    method: 'get',
    path: investigationsPath,
    operationId: 'listInvestigations',
    summary: 'List investigations',
    description:
      'The organization’s investigations, newest first (by id), with their findings. ' +
      'Filters combine with AND.',
    tags: ['investigations'],
    scope: 'read',
    request: { query: investigationListQuerySchema },
    responses: {
      200: json('One page of investigations.', investigationListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const parsed = queryOrThrow(parseInvestigationListQuery(query));
      const page = await deps.investigations.listInvestigations({
        orgId: authenticatedKey(res).orgId,
        status: parsed.status,
        alertId: parsed.alert_id,
        serviceId: parsed.service_id,
        limit: parsed.limit,
        offset: parsed.offset,
      });
      const body: InvestigationListResponse = {
        investigations: page.investigations.map(toInvestigationResponse),
        pagination: pageOf(parsed, page.investigations.length, page.total),
      };
      res.json(body);
    },
  },
  {
    method: 'post',
    path: investigationsPath,
    operationId: 'createInvestigation',
    summary: 'Open an investigation',
    description:
      'Of an alert (`{ alert_id }`, over its window `started_at`..`fired_at`), or of a service ' +
      'over a time range (`{ service_id, from, to }`). It is queued and runs in the ' +
      'background: poll its `Location`. An alert has at most one investigation: asking again ' +
      'answers the existing one, whatever its status. An alert or service the organization ' +
      'does not have is a 422 naming the field, like any other invalid body.',
    tags: ['investigations'],
    scope: 'write',
    request: {
      body: { schema: investigationCreateDocumentSchema, description: 'What to investigate.' },
    },
    responses: {
      202: created('The investigation, `queued` when new.', investigationDetailSchema),
      ...problems(401, 403, 413, 415, 422, 503),
    },
    handle: async ({ body, res, deps }) => {
      const request = bodyOrThrow(parseInvestigationRequest(body, deps.nowMs()));
      const orgId = authenticatedKey(res).orgId;
      // What the body names must exist in the org: otherwise the body is invalid (422), the
      // route itself exists (not 404).
      const investigation =
        request.kind === 'alert'
          ? await deps.investigations.openForAlert(orgId, request.alertId)
          : await deps.investigations.openForService({
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
      const response: InvestigationDetailResponse = toInvestigationDetailResponse(investigation);
      res.status(202).location(`${investigationsPath}/${investigation.id}`).json(response);
    },
  },
  {
    method: 'get',
    path: investigationPath,
    operationId: 'getInvestigation',
    summary: 'Get an investigation with its analysis, timeline and recommendations',
    description: '`analysis` is null until the investigation has completed.',
    tags: ['investigations'],
    scope: 'read',
    request: { params: idParams('inv', 'investigation') },
    responses: {
      200: json('The investigation.', investigationDetailSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = params['id'];
      // A malformed id cannot name an investigation: 404, exactly like an unknown one.
      const investigation = isId('inv', id)
        ? await deps.investigations.getInvestigation(authenticatedKey(res).orgId, id)
        : undefined;
      if (investigation === undefined) throw notFound('The investigation');
      const body: InvestigationDetailResponse = toInvestigationDetailResponse(investigation);
      res.json(body);
    },
  },
];
