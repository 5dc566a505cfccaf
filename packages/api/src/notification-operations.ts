import { z } from 'zod';
import { idSchema } from '@monitor/platform';
import {
  emailTargetSchema,
  notificationChannelListResponseSchema,
  notificationChannelSchema,
  notificationChannelTypes,
  notificationListResponseSchema,
  paginationQuerySchema,
  slackTargetSchema,
  webhookTargetSchema,
} from '@monitor/schemas';
import type { ApiOperation } from './operation-spec.js';
import { apiBasePath, json, noContent, problems } from './operation-spec.js';

export const notificationChannelsPath = `${apiBasePath}/notification-channels`;
export const notificationChannelPath = `${apiBasePath}/notification-channels/:type`;
export const alertNotificationsPath = `${apiBasePath}/alerts/:id/notifications`;

const channelTypeParams = z.object({
  type: z.enum(notificationChannelTypes).meta({
    description: 'The channel type: `slack`, `email` or `webhook`. Any other value is 404.',
  }),
});

const alertIdParams = z.object({
  id: idSchema('alr').meta({
    description: 'The alert id, `alr_<ULID>`. A malformed id is 404, like an unknown one.',
  }),
});

const channelTargetBody = z.union([slackTargetSchema, emailTargetSchema, webhookTargetSchema]);

const signatureDescription =
  'Webhook messages are a POST of the JSON notification `{ "transition", "alert" }` with ' +
  'headers `Idempotency-Key` (`alert_id:transition`), `X-Monitor-Timestamp` (Unix seconds) ' +
  'and `X-Monitor-Signature: sha256=<hex>`, the HMAC-SHA256 under the secret of ' +
  '`<timestamp>.<raw body>`. Verify it over the raw bytes before parsing, in constant time, ' +
  'and refuse timestamps more than 5 minutes old.';

/** The notification operations, in document order (part of `apiOperations`). */
export const notificationOperations: readonly ApiOperation[] = [
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
      '`{ "url", "secret" }` (the secret: 16 to 256 characters; the response masks it). ' +
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
    request: { params: alertIdParams, query: paginationQuerySchema },
    responses: {
      200: json('One page of the alert’s notifications.', notificationListResponseSchema),
      ...problems(401, 403, 404, 422, 503),
    },
  },
];
