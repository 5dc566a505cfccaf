import type { NotificationChannelRecord, NotificationRecord } from '@monitor/db';
import type { NotificationChannelResponse, NotificationResponse } from '@monitor/schemas';
import { notificationLimits, notificationTargetSchemas } from '@monitor/schemas';

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

export function toChannelResponse(record: NotificationChannelRecord): NotificationChannelResponse {
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
    case 'alertmanager': {
      const target = notificationTargetSchemas.alertmanager.parse(record.config);
      return {
        type: 'alertmanager',
        urls: target.urls,
        ...(target.basic_auth === undefined
          ? {}
          : {
              basic_auth: {
                username: target.basic_auth.username,
                password: maskWebhookSecret(target.basic_auth.password),
              },
            }),
        timeout_seconds: target.timeout_seconds,
        ...times,
      };
    }
  }
}

export function toNotificationResponse(record: NotificationRecord): NotificationResponse {
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
