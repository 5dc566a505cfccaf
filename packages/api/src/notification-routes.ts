import { isIP } from 'node:net';
import { z } from 'zod';
import { authenticatedKey } from '@monitor/auth';
import type { NotificationChannelStore, NotificationStore } from '@monitor/db';
import type { TargetAddressPolicy } from '@monitor/platform';
import { isId, notFound, validationError } from '@monitor/platform';
import type {
  NotificationChannelListResponse,
  NotificationChannelResponse,
  NotificationChannelType,
  NotificationListResponse,
  NotificationTarget,
} from '@monitor/schemas';
import {
  alertmanagerTargetSchema,
  emailTargetSchema,
  isNotificationChannelType,
  notificationChannelListResponseSchema,
  notificationChannelSchema,
  notificationChannelTypes,
  notificationListResponseSchema,
  notificationTargetSchemas,
  paginationQuerySchema,
  parseBody,
  parseQuery,
  slackTargetSchema,
  webhookTargetSchema,
} from '@monitor/schemas';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, idParams, json, noContent, problems } from './api-route.js';
import { bodyOrThrow } from './body-or-throw.js';
import { toChannelResponse, toNotificationResponse } from './notification-responses.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';

const notificationChannelsPath = `${apiBasePath}/notification-channels`;
const notificationChannelPath = `${apiBasePath}/notification-channels/:type`;
const alertNotificationsPath = `${apiBasePath}/alerts/:id/notifications`;

export type NotificationRouteDeps = {
  /** The organizations' channel targets. */
  channels: NotificationChannelStore;
  /** The outbox, read for an alert's delivery record. */
  notifications: Pick<NotificationStore, 'listForAlert'>;
  /**
   * The notifier's address policy (NOTIFIER_ALLOWED_TARGET_NETWORKS): a target whose host is an
   * address it refuses is a 422 here rather than a failed delivery later.
   */
  targetPolicy: TargetAddressPolicy;
};

const channelTypeParams = z.object({
  type: z.enum(notificationChannelTypes).meta({
    description:
      'The channel type: `slack`, `email`, `webhook` or `alertmanager`. Any other value is 404.',
  }),
});

const channelTargetBody = z.union([
  slackTargetSchema,
  emailTargetSchema,
  webhookTargetSchema,
  alertmanagerTargetSchema,
]);

const signatureDescription =
  'Webhook messages are a POST of the JSON notification `{ "transition", "alert" }` with ' +
  'headers `Idempotency-Key` (`alert_id:transition`), `X-Monitor-Timestamp` (Unix seconds) ' +
  'and `X-Monitor-Signature: sha256=<hex>`, the HMAC-SHA256 under the secret of ' +
  '`<timestamp>.<raw body>`. Verify it over the raw bytes before parsing, in constant time, ' +
  'and refuse timestamps more than 5 minutes old.';

/**
 * The organization's channel targets (`read` to see, `write` to change) and the delivery record
 * of an alert's notifications, in document order.
 */
export const notificationRoutes: readonly ApiRoute<NotificationRouteDeps>[] = [
  {
    method: 'get',
    path: notificationChannelsPath,
    operationId: 'listNotificationChannels',
    summary: 'List the organization’s notification channels',
    description: 'The configured targets, ordered by type. A webhook secret is masked.',
    tags: ['notifications'],
    scope: 'read',
    request: { query: paginationQuerySchema },
    responses: {
      200: json('One page of channels.', notificationChannelListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const page = queryOrThrow(parseQuery(paginationQuerySchema, query));
      // At most one row per channel type: paged in memory.
      const records = await deps.channels.listChannels(authenticatedKey(res).orgId);
      const channels = records.slice(page.offset, page.offset + page.limit);
      const body: NotificationChannelListResponse = {
        channels: channels.map(toChannelResponse),
        pagination: pageOf(page, channels.length, records.length),
      };
      res.json(body);
    },
  },
  {
    method: 'get',
    path: notificationChannelPath,
    operationId: 'getNotificationChannel',
    summary: 'Get the target of one channel type',
    description:
      'A webhook secret is never shown in full after it was set: `secret` reads `********` ' +
      'followed by its last 4 characters.',
    tags: ['notifications'],
    scope: 'read',
    request: { params: channelTypeParams },
    responses: {
      200: json('The channel.', notificationChannelSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const type = channelTypeOf(params['type']);
      const record = await deps.channels.getChannel(authenticatedKey(res).orgId, type);
      if (record === undefined) throw channelNotFound(type);
      const body: NotificationChannelResponse = toChannelResponse(record);
      res.json(body);
    },
  },
  {
    method: 'put',
    path: notificationChannelPath,
    operationId: 'putNotificationChannel',
    summary: 'Set the target of one channel type',
    description:
      'Creates or replaces the organization’s target of the type. Alerts whose rules list the ' +
      'channel notify it on fire and on resolve; a channel without a target fails visibly in ' +
      'the alert’s notifications. `slack` takes `{ "webhook_url" }`, `email` ' +
      '`{ "to": [...], "from" }` (sent through the service’s SMTP server), `webhook` ' +
      '`{ "url", "secret" }` (the secret: 16 to 256 characters; the response masks it), ' +
      '`alertmanager` `{ "urls": [...], "basic_auth"?: { "username", "password" }, ' +
      '"timeout_seconds"? }` (Prometheus Alertmanagers, posted to `<url>/api/v2/alerts`; the ' +
      'response masks the password). ' +
      signatureDescription,
    tags: ['notifications'],
    scope: 'write',
    request: {
      params: channelTypeParams,
      body: { schema: channelTargetBody, description: 'The target for the type in the path.' },
    },
    responses: {
      200: json('The stored channel, a webhook secret masked.', notificationChannelSchema),
      ...problems(401, 403, 404, 413, 415, 422, 503),
    },
    checkPath: (params) => {
      channelTypeOf(params['type']);
    },
    handle: async ({ params, body, res, deps }) => {
      const type = channelTypeOf(params['type']);
      const target = bodyOrThrow(parseBody(notificationTargetSchemas[type], body));
      rejectUnreachableUrl(target, deps.targetPolicy);
      const record = await deps.channels.putChannel(authenticatedKey(res).orgId, type, target);
      const response: NotificationChannelResponse = toChannelResponse(record);
      res.json(response);
    },
  },
  {
    method: 'delete',
    path: notificationChannelPath,
    operationId: 'deleteNotificationChannel',
    summary: 'Remove the target of one channel type',
    description: 'Messages for the channel fail from then on, visibly, until a target is set.',
    tags: ['notifications'],
    scope: 'write',
    request: { params: channelTypeParams },
    responses: {
      204: noContent('Removed.'),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const type = channelTypeOf(params['type']);
      const deleted = await deps.channels.deleteChannel(authenticatedKey(res).orgId, type);
      if (!deleted) throw channelNotFound(type);
      res.status(204).end();
    },
  },
  {
    method: 'get',
    path: alertNotificationsPath,
    operationId: 'listAlertNotifications',
    summary: 'The delivery record of an alert’s notifications',
    description:
      'One message per channel of the rule for each transition (`fired`, `resolved`), ' +
      'delivered at least once from a durable outbox with exponential backoff; each lists ' +
      'every attempt with the receiver’s answer or the failure. A channel without a target ' +
      'is `failed` at once with that reason.',
    tags: ['notifications'],
    scope: 'read',
    request: { params: idParams('alr', 'alert'), query: paginationQuerySchema },
    responses: {
      200: json('One page of the alert’s notifications.', notificationListResponseSchema),
      ...problems(401, 403, 404, 422, 503),
    },
    handle: async ({ params, query, res, deps }) => {
      const alertId = params['id'];
      const page = queryOrThrow(parseQuery(paginationQuerySchema, query));
      // A malformed id cannot name an alert: 404, exactly like an unknown one.
      if (!isId('alr', alertId)) throw alertNotFound();
      // At most one row per (channel, transition): paged in memory.
      const records = await deps.notifications.listForAlert(authenticatedKey(res).orgId, alertId);
      if (records === undefined) throw alertNotFound();
      const notifications = records.slice(page.offset, page.offset + page.limit);
      const body: NotificationListResponse = {
        notifications: notifications.map(toNotificationResponse),
        pagination: pageOf(page, notifications.length, records.length),
      };
      res.json(body);
    },
  },
];

function channelNotFound(type: string) {
  return notFound(`The ${type} notification channel`);
}

function alertNotFound() {
  return notFound('The alert');
}

/** An unknown channel type is 404, like a path that does not exist. */
function channelTypeOf(value: string | string[] | undefined): NotificationChannelType {
  if (!isNotificationChannelType(value)) throw notFound('The notification channel type');
  return value;
}

/**
 * A 422 for a Slack, webhook or Alertmanager URL the notifier would refuse on its face: one with
 * a user name or password (GET shows these URLs in full; Alertmanager takes `basic_auth`), or
 * whose host is an address the policy refuses (loopback, private, link-local…) or `localhost`.
 * A host name is not resolved here: it can resolve anywhere later, so the notifier checks again
 * where it connects.
 */
function rejectUnreachableUrl(target: NotificationTarget, policy: TargetAddressPolicy): void {
  const fields =
    'webhook_url' in target
      ? [{ path: 'webhook_url', url: target.webhook_url }]
      : 'urls' in target
        ? target.urls.map((url, i) => ({ path: `urls[${i}]`, url }))
        : 'url' in target
          ? [{ path: 'url', url: target.url }]
          : [];
  for (const field of fields) rejectUnreachable(field, policy);
}

function rejectUnreachable(
  field: { path: string; url: string },
  policy: TargetAddressPolicy,
): void {
  const { username, password, hostname } = new URL(field.url);
  if (username !== '' || password !== '') {
    throw validationError([
      { path: field.path, message: 'must not contain a user name or password' },
    ]);
  }
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const address = host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : host;
  if (isIP(address) === 0) return;
  const refusal = policy.refusalOf(address);
  if (refusal !== undefined) {
    throw validationError([
      {
        path: field.path,
        message: `must not lead to ${refusal} (allowed only in NOTIFIER_ALLOWED_TARGET_NETWORKS)`,
      },
    ]);
  }
}
