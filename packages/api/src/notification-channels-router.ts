import { isIP } from 'node:net';
import { Router } from 'express';
import type { Router as ExpressRouter } from 'express';
import type {
  NotificationChannelRecord,
  NotificationChannelStore,
  NotificationRecord,
  NotificationStore,
} from '@monitor/db';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { TargetAddressPolicy } from '@monitor/platform';
import { isId, methodNotAllowedHandler, notFound, validationError } from '@monitor/platform';
import type {
  NotificationChannelListResponse,
  NotificationChannelResponse,
  NotificationChannelType,
  NotificationListResponse,
  NotificationResponse,
  NotificationTarget,
  QueryInput,
} from '@monitor/schemas';
import {
  isNotificationChannelType,
  notificationLimits,
  notificationTargetSchemas,
  paginationQuerySchema,
  parseBody,
  parseQuery,
} from '@monitor/schemas';
import {
  alertNotificationsPath,
  notificationChannelPath,
  notificationChannelsPath,
} from './notification-operations.js';
import { databaseErrors } from './database-errors.js';
import { bodyOrThrow } from './body-or-throw.js';
import { jsonBody } from './json-body.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf, requireScope } from './require-scope.js';

export type NotificationChannelsRouterDeps = {
  /** The organizations' channel targets. */
  channels: NotificationChannelStore;
  /** The outbox, read for an alert's delivery record. */
  notifications: Pick<NotificationStore, 'listForAlert'>;
  /** Resolves API keys (cached); a lookup that throws is a dependency failure (503). */
  authenticator: ApiKeyAuthenticator;
  /** Retry-After of a 503 when the database is unreachable (default 5). */
  retryAfterSeconds?: number;
  /**
   * The notifier's address policy (NOTIFIER_ALLOWED_TARGET_NETWORKS): a target whose host is an
   * address it refuses is a 422 here rather than a failed delivery later.
   */
  targetPolicy: TargetAddressPolicy;
};

/**
 * The notification endpoints under `/api/v1` (absolute paths: mount with `app.use(router)`):
 * the organization's channel targets (`read` to see, `write` to change) and the delivery record
 * of an alert's notifications. Errors go to the app's problem handler; database connection
 * failures become 503 on the way.
 */
export function createNotificationChannelsRouter(
  deps: NotificationChannelsRouterDeps,
): ExpressRouter {
  const router = Router();
  const read = requireScope(deps.authenticator, 'read');
  const write = requireScope(deps.authenticator, 'write');

  router
    .route(notificationChannelsPath)
    .get(read, async (req, res) => {
      const page = queryOrThrow(parseQuery(paginationQuerySchema, req.query as QueryInput));
      // At most one row per channel type: paged in memory.
      const records = await deps.channels.listChannels(authOf(res).orgId);
      const channels = records.slice(page.offset, page.offset + page.limit);
      const body: NotificationChannelListResponse = {
        channels: channels.map(toChannelResponse),
        pagination: pageOf(page, channels.length, records.length),
      };
      res.json(body);
    })
    .all(methodNotAllowedHandler(['GET']));

  router
    .route(notificationChannelPath)
    .get(read, async (req, res) => {
      const type = channelTypeOf(req.params['type']);
      const record = await deps.channels.getChannel(authOf(res).orgId, type);
      if (record === undefined) throw channelNotFound(type);
      const body: NotificationChannelResponse = toChannelResponse(record);
      res.json(body);
    })
    .put(
      write,
      // An unknown type is 404 before the body is even looked at.
      (req, _res, next) => {
        channelTypeOf(req.params['type']);
        next();
      },
      ...jsonBody,
      async (req, res) => {
        const type = channelTypeOf(req.params['type']);
        const target = bodyOrThrow(parseBody(notificationTargetSchemas[type], req.body as unknown));
        rejectUnreachableUrl(target, deps.targetPolicy);
        const record = await deps.channels.putChannel(authOf(res).orgId, type, target);
        const body: NotificationChannelResponse = toChannelResponse(record);
        res.json(body);
      },
    )
    .delete(write, async (req, res) => {
      const type = channelTypeOf(req.params['type']);
      const deleted = await deps.channels.deleteChannel(authOf(res).orgId, type);
      if (!deleted) throw channelNotFound(type);
      res.status(204).end();
    })
    .all(methodNotAllowedHandler(['GET', 'PUT', 'DELETE']));

  router
    .route(alertNotificationsPath)
    .get(read, async (req, res) => {
      const alertId = req.params['id'];
      const page = queryOrThrow(parseQuery(paginationQuerySchema, req.query as QueryInput));
      // A malformed id cannot name an alert: 404, exactly like an unknown one.
      if (!isId('alr', alertId)) throw alertNotFound();
      // At most one row per (channel, transition): paged in memory.
      const records = await deps.notifications.listForAlert(authOf(res).orgId, alertId);
      if (records === undefined) throw alertNotFound();
      const notifications = records.slice(page.offset, page.offset + page.limit);
      const body: NotificationListResponse = {
        notifications: notifications.map(toNotificationResponse),
        pagination: pageOf(page, notifications.length, records.length),
      };
      res.json(body);
    })
    .all(methodNotAllowedHandler(['GET']));

  router.use(databaseErrors(deps.retryAfterSeconds ?? 5));
  return router;
}

function channelNotFound(type: string) {
  return notFound(`The ${type} notification channel`);
}

function alertNotFound() {
  return notFound('The alert');
}

/**
 * A 422 for a Slack or webhook URL the notifier would refuse on its face: one with a user name
 * or password (GET shows a webhook URL in full), or whose host is an address the policy
 * refuses (loopback, private, link-local…) or `localhost`. A host name is not resolved here:
 * it can resolve anywhere later, so the notifier checks again where it connects.
 */
function rejectUnreachableUrl(target: NotificationTarget, policy: TargetAddressPolicy): void {
  const field =
    'webhook_url' in target
      ? { path: 'webhook_url', url: target.webhook_url }
      : 'url' in target
        ? { path: 'url', url: target.url }
        : undefined;
  if (field === undefined) return;
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

/** An unknown channel type is 404, like a path that does not exist. */
function channelTypeOf(value: string | string[] | undefined): NotificationChannelType {
  if (!isNotificationChannelType(value)) throw notFound('The notification channel type');
  return value;
}

/** `********` and the secret's last characters: enough to tell secrets apart, not to sign. */
function maskWebhookSecret(secret: string): string {
  return '********' + secret.slice(-notificationLimits.shownWebhookSecretCharacters);
}

/**
 * A Slack incoming-webhook URL is itself the credential (anyone holding it can post to the
 * channel): responses show its origin, `********` and its last characters, like a secret.
 */
function maskSlackWebhookUrl(webhookUrl: string): string {
  return `${new URL(webhookUrl).origin}/${maskWebhookSecret(webhookUrl)}`;
}

function toChannelResponse(record: NotificationChannelRecord): NotificationChannelResponse {
  const times = {
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
  };
  // The stored config was validated by the same schemas when it was PUT.
  switch (record.type) {
    case 'slack':
      return {
        type: 'slack',
        webhook_url: maskSlackWebhookUrl(
          notificationTargetSchemas.slack.parse(record.config).webhook_url,
        ),
        ...times,
      };
    case 'email':
      return { type: 'email', ...notificationTargetSchemas.email.parse(record.config), ...times };
    case 'webhook': {
      const target = notificationTargetSchemas.webhook.parse(record.config);
      return {
        type: 'webhook',
        url: target.url,
        secret: maskWebhookSecret(target.secret),
        ...times,
      };
    }
  }
}

function toNotificationResponse(record: NotificationRecord): NotificationResponse {
  return {
    id: record.id,
    alert_id: record.alertId,
    channel: record.channel,
    transition: record.transition,
    idempotency_key: record.idempotencyKey,
    status: record.status,
    attempts: record.attempts,
    next_attempt_at: record.nextAttemptAt?.toISOString() ?? null,
    last_error: record.lastError,
    created_at: record.createdAt.toISOString(),
    delivered_at: record.deliveredAt?.toISOString() ?? null,
    attempt_log: record.attemptLog.map((attempt) => ({
      attempt: attempt.attempt,
      attempted_at: attempt.attemptedAt.toISOString(),
      outcome: attempt.outcome,
      detail: attempt.detail,
      duration_ms: attempt.durationMs,
    })),
  };
}
