import { authenticatedKey } from '@monitor/auth';
import type { ServiceQueries } from '@monitor/db';
import { isId, notFound } from '@monitor/platform';
import type {
  ServiceDetailResponse,
  ServiceListResponse,
  ServiceMetricsResponse,
} from '@monitor/schemas';
import {
  parseServiceListQuery,
  parseServiceMetricsQuery,
  serviceDetailSchema,
  serviceListQuerySchema,
  serviceListResponseSchema,
  serviceMetricsQuerySchema,
  serviceMetricsResponseSchema,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, idParams, json, problems } from './api-route.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import {
  toServiceDetailResponse,
  toServiceMetricsResponse,
  toServiceResponse,
} from './service-responses.js';
import { sendExactJson } from './exact-json.js';

const servicesPath = `${apiBasePath}/services`;
const servicePath = `${apiBasePath}/services/:id`;
const serviceMetricsPath = `${apiBasePath}/services/:id/metrics`;

export type ServiceRouteDeps = {
  /** Reads of the services projection, snapshots, alerts and aggregates. */
  services: ServiceQueries;
  /** The clock of staleness and of the metrics defaults. */
  nowMs: () => number;
};

const serviceIdParams = idParams('svc', 'service');

/** The monitored services, their status and metric history, in document order. */
export const serviceRoutes: readonly ApiRoute<ServiceRouteDeps>[] = [
  {
    method: 'get',
    path: servicesPath,
    operationId: 'listServices',
    summary: 'List the monitored services',
    description:
      'The services (hosts) of the caller’s organization, ordered by name (unique within an organization), with their ' +
      'derived status and the latest value of each metric. Filters combine with AND.',
    tags: ['services'],
    scope: 'read',
    request: { query: serviceListQuerySchema },
    responses: {
      200: json('One page of services.', serviceListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const parsed = queryOrThrow(parseServiceListQuery(query));
      const { services, total } = await deps.services.listServices({
        orgId: authenticatedKey(res).orgId,
        status: parsed.status,
        tags: parsed.tags,
        limit: parsed.limit,
        offset: parsed.offset,
        now: new Date(deps.nowMs()),
      });
      const body: ServiceListResponse = {
        services: services.map(toServiceResponse),
        pagination: pageOf(parsed, services.length, total),
      };
      res.json(body);
    },
  },
  {
    method: 'get',
    path: servicePath,
    operationId: 'getService',
    summary: 'Get a service with its latest snapshot and active alerts',
    tags: ['services'],
    scope: 'read',
    request: { params: serviceIdParams },
    responses: {
      200: json('The service.', serviceDetailSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = serviceIdOf(params['id']);
      const service = await deps.services.getService({
        orgId: authenticatedKey(res).orgId,
        id,
        now: new Date(deps.nowMs()),
      });
      if (service === undefined) throw serviceNotFound();
      const body: ServiceDetailResponse = toServiceDetailResponse(service);
      res.json(body);
    },
  },
  {
    method: 'get',
    path: serviceMetricsPath,
    operationId: 'getServiceMetrics',
    summary: 'Read a metric of a service over time',
    description:
      'Buckets of one metric over time. `from` is rounded down and `to` up to whole steps. ' +
      'Both steps read buckets computed from the raw samples while they are kept; past the raw ' +
      'retention `1m` reads the 5-minute tier (a point every 5 minutes, each covering ' +
      '(time, time + 5 min]) and `1h` the hourly tier (each point covering (time, time + 1 h]). ' +
      'A metric ' +
      'the service never reported gives an empty `points` list. A metric an agent protocol ' +
      'wrote under several label sets (one series each) reads as those series together: per ' +
      'bucket the average weighted by count, the least minimum, the greatest maximum and the ' +
      'counts added.',
    tags: ['services'],
    scope: 'read',
    request: { params: serviceIdParams, query: serviceMetricsQuerySchema },
    responses: {
      200: json('The metric’s buckets, oldest first.', serviceMetricsResponseSchema),
      ...problems(401, 403, 404, 422, 503),
    },
    handle: async ({ params, query, res, deps }) => {
      const id = serviceIdOf(params['id']);
      const now = deps.nowMs();
      const parsed = queryOrThrow(parseServiceMetricsQuery(query, now));
      const rows = await deps.services.readMetricSeries({
        orgId: authenticatedKey(res).orgId,
        serviceId: id,
        ...parsed,
      });
      if (rows === undefined) throw serviceNotFound();
      const body: ServiceMetricsResponse = toServiceMetricsResponse(parsed, rows);
      // A bucket of −0 samples has an average, a minimum and a maximum of −0.
      const negativeZero = rows.some(
        (row) => Object.is(row.avg, -0) || Object.is(row.min, -0) || Object.is(row.max, -0),
      );
      sendExactJson(res, body, negativeZero);
    },
  },
];

function serviceNotFound() {
  return notFound('The service');
}

/** A malformed id cannot name a service: 404, exactly like an unknown one. */
function serviceIdOf(value: string | string[] | undefined): string {
  if (!isId('svc', value)) throw serviceNotFound();
  return value;
}
