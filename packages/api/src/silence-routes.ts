import { authenticatedKey } from '@monitor/auth';
import type { SilenceStore } from '@monitor/db';
import { recurrenceProblem, silenceStateAt } from '@monitor/db';
import { isId, notFound, validationError } from '@monitor/platform';
import type { Silence, SilenceListResponse, SilenceResponse } from '@monitor/schemas';
import {
  parseBody,
  parseQuery,
  silenceCreateSchema,
  silenceListQuerySchema,
  silenceListResponseSchema,
  silenceSchema,
  toSilenceMatchers,
  toSilenceResponse,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, created, idParams, json, noContent, problems } from './api-route.js';
import { bodyOrThrow } from './body-or-throw.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';

const silencesPath = `${apiBasePath}/silences`;
const silencePath = `${apiBasePath}/silences/:id`;

export type SilenceRouteDeps = {
  /** Silences: they act on notifications, never on alerts. */
  silences: SilenceStore;
  /** The instant states are judged at, and the end of a deleted silence. */
  nowMs: () => number;
};

const silenceIdParams = idParams('sil', 'silence');

/** Silences and recurring maintenance windows, in document order. */
export const silenceRoutes: readonly ApiRoute<SilenceRouteDeps>[] = [
  {
    method: 'get',
    path: silencesPath,
    operationId: 'listSilences',
    summary: 'List silences',
    description:
      'The organization’s silences, newest first (by id): active and pending ones unless ' +
      '`state` says otherwise. States are judged at the time of the request.',
    tags: ['silences'],
    scope: 'read',
    request: { query: silenceListQuerySchema },
    responses: {
      200: json('One page of silences.', silenceListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const parsed = queryOrThrow(parseQuery(silenceListQuerySchema, query));
      const now = new Date(deps.nowMs());
      const page = await deps.silences.listSilences({
        orgId: authenticatedKey(res).orgId,
        state: parsed.state,
        now,
        limit: parsed.limit,
        offset: parsed.offset,
      });
      const body: SilenceListResponse = {
        silences: page.silences.map((silence) => responseOf(silence, now)),
        pagination: pageOf(parsed, page.silences.length, page.total),
      };
      res.json(body);
    },
  },
  {
    method: 'post',
    path: silencesPath,
    operationId: 'createSilence',
    summary: 'Create a silence',
    description:
      'Matching alerts still fire, resolve and open investigations; their notifications are ' +
      'recorded `suppressed` and not sent while the silence is in force. When it ends on a ' +
      'still-active alert, the alert is notified then. With `recurrence` it is a recurring ' +
      'maintenance window. `ends_at` must be after `starts_at`; at least one matcher.',
    tags: ['silences'],
    scope: 'write',
    request: { body: { schema: silenceCreateSchema, description: 'The silence.' } },
    responses: {
      201: created('The stored silence.', silenceSchema),
      ...problems(401, 403, 413, 415, 422, 503),
    },
    handle: async ({ body, res, deps }) => {
      const request = bodyOrThrow(parseBody(silenceCreateSchema, body));
      if (request.recurrence !== null) {
        const problem = recurrenceProblem(request.recurrence);
        if (problem !== undefined) {
          throw validationError([{ path: `recurrence.${problem[0]}`, message: problem[1] }]);
        }
      }
      const { orgId, keyId } = authenticatedKey(res);
      const silence = await deps.silences.createSilence(orgId, keyId, {
        matchers: toSilenceMatchers(request.matchers),
        startsAt: new Date(request.starts_at),
        endsAt: new Date(request.ends_at),
        comment: request.comment,
        recurrence:
          request.recurrence === null
            ? null
            : {
                rrule: request.recurrence.rrule,
                durationMinutes: request.recurrence.duration_minutes,
                timezone: request.recurrence.timezone,
              },
      });
      const response = responseOf(silence, new Date(deps.nowMs()));
      res.status(201).location(`${silencesPath}/${silence.id}`).json(response);
    },
  },
  {
    method: 'get',
    path: silencePath,
    operationId: 'getSilence',
    summary: 'Get a silence',
    tags: ['silences'],
    scope: 'read',
    request: { params: silenceIdParams },
    responses: {
      200: json('The silence.', silenceSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const silence = await deps.silences.getSilence(
        authenticatedKey(res).orgId,
        silenceIdOf(params['id']),
      );
      if (silence === undefined) throw silenceNotFound();
      res.json(responseOf(silence, new Date(deps.nowMs())));
    },
  },
  {
    method: 'delete',
    path: silencePath,
    operationId: 'expireSilence',
    summary: 'Expire a silence',
    description:
      'It ends now (`ends_at` becomes the time of the request) and stays listed as `expired`. ' +
      'Alerts it silenced that are still active are notified then.',
    tags: ['silences'],
    scope: 'write',
    request: { params: silenceIdParams },
    responses: {
      204: noContent('Expired.'),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = silenceIdOf(params['id']);
      const expired = await deps.silences.expireSilence(
        authenticatedKey(res).orgId,
        id,
        new Date(deps.nowMs()),
      );
      if (!expired) throw silenceNotFound();
      res.status(204).end();
    },
  },
];

function responseOf(silence: Silence, now: Date): SilenceResponse {
  return toSilenceResponse(silence, silenceStateAt(silence, now.getTime()));
}

function silenceNotFound() {
  return notFound('The silence');
}

/** A malformed id cannot name a silence: 404, exactly like an unknown one. */
function silenceIdOf(value: string | string[] | undefined): string {
  if (!isId('sil', value)) throw silenceNotFound();
  return value;
}
