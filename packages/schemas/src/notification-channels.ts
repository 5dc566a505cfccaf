import { z } from 'zod';
import { paginationSchema } from './api.js';
import { storableText } from './input-policy.js';

/**
 * Wire formats of notifications: the per-organization channel targets
 * (`/api/v1/notification-channels/:type`) and the delivery record of an alert's messages
 * (`/api/v1/alerts/:id/notifications`). The notifier reads stored targets with the same schemas.
 */

export const notificationChannelTypes = ['slack', 'email', 'webhook', 'alertmanager'] as const;
export type NotificationChannelType = (typeof notificationChannelTypes)[number];

export function isNotificationChannelType(value: unknown): value is NotificationChannelType {
  return (notificationChannelTypes as readonly unknown[]).includes(value);
}

export const notificationLimits = {
  /** A webhook secret shorter than this is guessable; HMAC keys gain nothing past the maximum. */
  minWebhookSecretLength: 16,
  maxWebhookSecretLength: 256,
  maxEmailRecipients: 20,
  maxUrlLength: 2048,
  /** Characters of a stored webhook secret that responses reveal, at its end. */
  shownWebhookSecretCharacters: 4,
  /** Alertmanagers of one channel: a cluster's peers, or a few independent ones. */
  maxAlertmanagerUrls: 10,
  maxAlertmanagerTimeoutSeconds: 60,
  maxBasicAuthFieldLength: 256,
} as const;

/**
 * An http(s) URL as written: the scheme in lower case, then no space or control character, and
 * something the URL parser takes. The parser alone (and zod's `url()`, which trims first) would
 * also take ` https://x`, `HTTPS://x` or `https:x`, which a pattern in the document could not
 * describe; checked this way, the documented pattern is exactly the syntax refused.
 */
const httpUrlDocumentPattern = '^https?://[^\\u0000-\\u0020]+$';
/** The same but for NUL, which the input policy's own check reports (one issue, its message). */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const httpUrlPattern = /^https?:\/\/[^\u0001-\u0020]+$/;

const httpUrlMessage = 'must be an http or https URL';

const httpUrl = storableText(
  z
    .string({ error: httpUrlMessage })
    .max(notificationLimits.maxUrlLength, {
      error: `must be at most ${notificationLimits.maxUrlLength} characters`,
    })
    .regex(httpUrlPattern, { error: httpUrlMessage, abort: true })
    .refine((url) => URL.canParse(url), { error: httpUrlMessage }),
).meta({ pattern: httpUrlDocumentPattern });

const emailAddress = z.email({ error: 'must be an email address such as ops@example.com' });

export const slackTargetSchema = z
  .object({
    webhook_url: httpUrl.meta({
      description: 'A Slack incoming webhook URL, e.g. `https://hooks.slack.com/services/…`.',
    }),
  })
  .meta({ id: 'SlackTarget' });
export type SlackTarget = z.infer<typeof slackTargetSchema>;

export const emailTargetSchema = z
  .object({
    to: z
      .array(emailAddress)
      .min(1, { error: 'must list at least one address' })
      .max(notificationLimits.maxEmailRecipients, {
        error: `must list at most ${notificationLimits.maxEmailRecipients} addresses`,
      })
      .meta({ description: 'Recipients of every message.' }),
    from: emailAddress.meta({ description: 'The sender address of every message.' }),
  })
  .meta({
    id: 'EmailTarget',
    description: 'Sent through the SMTP server of the service’s configuration.',
  });
export type EmailTarget = z.infer<typeof emailTargetSchema>;

const webhookSecretMessage =
  `must be ${notificationLimits.minWebhookSecretLength} to ` +
  `${notificationLimits.maxWebhookSecretLength} characters`;

export const webhookTargetSchema = z
  .object({
    url: httpUrl.meta({ description: 'Receives a POST of the JSON notification.' }),
    secret: storableText(
      z
        .string({ error: 'is required' })
        .min(notificationLimits.minWebhookSecretLength, { error: webhookSecretMessage })
        .max(notificationLimits.maxWebhookSecretLength, { error: webhookSecretMessage }),
    ).meta({
      description:
        'The HMAC-SHA256 key of the `X-Monitor-Signature` header. Never shown in full again: ' +
        'responses show `********` followed by its last 4 characters.',
    }),
  })
  .meta({ id: 'WebhookTarget' });
export type WebhookTarget = z.infer<typeof webhookTargetSchema>;

const basicAuthField = (description: string) =>
  storableText(
    z
      .string({ error: 'is required' })
      .min(1, { error: 'must not be empty' })
      .max(notificationLimits.maxBasicAuthFieldLength, {
        error: `must be at most ${notificationLimits.maxBasicAuthFieldLength} characters`,
      }),
  ).meta({ description });

export const alertmanagerTargetSchema = z
  .object({
    urls: z
      .array(
        httpUrl.meta({
          description:
            'An Alertmanager’s base URL, e.g. `http://alertmanager:9093` (messages go to ' +
            '`<url>/api/v2/alerts`). No user name or password in it: see `basic_auth`.',
        }),
      )
      .min(1, { error: 'must list at least one URL' })
      .max(notificationLimits.maxAlertmanagerUrls, {
        error: `must list at most ${notificationLimits.maxAlertmanagerUrls} URLs`,
      })
      .refine((urls) => new Set(urls).size === urls.length, {
        error: 'must not name a URL twice',
      })
      .meta({
        description:
          'Every message goes to each of them, as Prometheus sends to all its Alertmanagers; ' +
          'it is delivered once one of them accepted it.',
      }),
    basic_auth: z
      .object({
        username: basicAuthField('HTTP basic authentication user name.'),
        password: basicAuthField(
          'Never shown again: responses show `********` followed by its last 4 characters.',
        ),
      })
      .optional()
      .meta({ description: 'Sent with every request when the Alertmanagers sit behind a proxy.' }),
    timeout_seconds: z
      .number({ error: 'must be a number of seconds' })
      .int({ error: 'must be a whole number of seconds' })
      .min(1, { error: 'must be at least 1' })
      .max(notificationLimits.maxAlertmanagerTimeoutSeconds, {
        error: `must be at most ${notificationLimits.maxAlertmanagerTimeoutSeconds}`,
      })
      .default(10)
      .meta({ description: 'Bounds each POST to one Alertmanager.' }),
  })
  .meta({
    id: 'AlertmanagerTarget',
    description:
      'Prometheus Alertmanagers (API v2): firing alerts are posted with `startsAt` and an ' +
      '`endsAt` 4 minutes ahead, re-sent every minute while active, and posted resolved with ' +
      'their `endsAt`.',
  });
export type AlertmanagerTarget = z.output<typeof alertmanagerTargetSchema>;

/** The target of each channel type: PUT bodies, and what the notifier reads back. */
export const notificationTargetSchemas = {
  slack: slackTargetSchema,
  email: emailTargetSchema,
  webhook: webhookTargetSchema,
  alertmanager: alertmanagerTargetSchema,
} as const;

export type NotificationTargets = {
  slack: SlackTarget;
  email: EmailTarget;
  webhook: WebhookTarget;
  alertmanager: AlertmanagerTarget;
};

/** Any channel's target. */
export type NotificationTarget = NotificationTargets[NotificationChannelType];

const utcDateTime = z.iso.datetime().meta({ example: '2026-11-22T10:00:00.000Z' });

const storedTimes = {
  created_at: utcDateTime,
  updated_at: utcDateTime.meta({ description: 'Time of the last PUT.' }),
};

export const notificationChannelSchema = z
  .discriminatedUnion('type', [
    slackTargetSchema.extend({
      type: z.literal('slack'),
      webhook_url: z.string().meta({
        description:
          'Masked, since the URL itself lets anyone post: its origin, `********` and its last 4 ' +
          'characters.',
        example: 'https://hooks.slack.com/********x9Zq',
      }),
      ...storedTimes,
    }),
    emailTargetSchema.extend({ type: z.literal('email'), ...storedTimes }),
    webhookTargetSchema.extend({
      type: z.literal('webhook'),
      secret: z.string().meta({
        description: 'Masked: `********` followed by the last 4 characters of the secret.',
        example: '********k9Qz',
      }),
      ...storedTimes,
    }),
    alertmanagerTargetSchema.extend({
      type: z.literal('alertmanager'),
      basic_auth: z
        .object({
          username: z.string(),
          password: z.string().meta({
            description: 'Masked: `********` followed by the last 4 characters of the password.',
            example: '********s3cr',
          }),
        })
        .optional(),
      timeout_seconds: z.number().int(),
      ...storedTimes,
    }),
  ])
  .meta({
    id: 'NotificationChannel',
    description:
      'The target of one channel type; the Slack URL, a webhook secret and an Alertmanager ' +
      'password are masked.',
  });
export type NotificationChannelResponse = z.infer<typeof notificationChannelSchema>;

export const notificationChannelListResponseSchema = z
  .object({
    channels: z
      .array(notificationChannelSchema)
      .meta({ description: 'The configured channels, ordered by type.' }),
    pagination: paginationSchema,
  })
  .meta({ id: 'NotificationChannelList' });
export type NotificationChannelListResponse = z.infer<typeof notificationChannelListResponseSchema>;

// ---- deliveries ----------------------------------------------------------------------------

const notificationStatuses = ['pending', 'delivered', 'failed', 'suppressed'] as const;

const notificationTransitions = [
  'fired',
  'resolved',
  'renotified',
  'unsilenced',
  'settled',
] as const;

const notificationAttemptSchema = z
  .object({
    attempt: z.number().int().min(1),
    attempted_at: utcDateTime,
    outcome: z.enum(['delivered', 'failed']),
    detail: z.string().meta({
      description:
        'What the receiver answered (`HTTP 200`, an SMTP reply such as `250 OK`) or why the ' +
        'attempt failed (a network error, a timeout, no target configured).',
    }),
    duration_ms: z.number().int().min(0),
  })
  .meta({ id: 'NotificationAttempt' });

export const notificationSchema = z
  .object({
    id: z.string().meta({ example: 'ntf_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    alert_id: z.string(),
    channel: z.enum(notificationChannelTypes),
    transition: z.enum(notificationTransitions),
    idempotency_key: z.string().meta({
      description:
        '`alert_id:transition` (then `:<n>` for the repeatable ones), sent with every ' +
        'message (`Idempotency-Key` header) so a ' +
        'receiver can drop the duplicates at-least-once delivery may cause.',
    }),
    status: z.enum(notificationStatuses).meta({
      description:
        '`pending` until delivered; `failed` once the attempts are exhausted or no target is ' +
        'configured for the channel; `suppressed` when a silence matched the alert when it ' +
        'was due (not sent).',
    }),
    attempts: z.number().int().min(0).meta({ description: 'Attempts made so far.' }),
    next_attempt_at: utcDateTime.nullable().meta({
      description:
        'When a pending message is tried next (while an attempt is in flight, when its lease ' +
        'ends); null once delivered or failed.',
    }),
    last_error: z.string().nullable(),
    created_at: utcDateTime,
    delivered_at: utcDateTime.nullable(),
    attempt_log: z
      .array(notificationAttemptSchema)
      .meta({ description: 'Every attempt, oldest first.' }),
  })
  .meta({ id: 'Notification' });
export type NotificationResponse = z.infer<typeof notificationSchema>;

export const notificationListResponseSchema = z
  .object({
    notifications: z.array(notificationSchema).meta({
      description: 'The alert’s messages, oldest first (fired before resolved), then by channel.',
    }),
    pagination: paginationSchema,
  })
  .meta({ id: 'NotificationList' });
export type NotificationListResponse = z.infer<typeof notificationListResponseSchema>;
