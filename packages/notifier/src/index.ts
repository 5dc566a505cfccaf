export { escapeSlackText, formatAlertMessage, formatSlackText } from './alert-message.js';
export type { AlertMessage } from './alert-message.js';
export { createEmailSender, createSmtpTransport } from './email-sender.js';
export type { MailMessage, MailTransport, SmtpTransportOptions } from './email-sender.js';
export { httpPost } from './http-post.js';
export type { HttpPostOptions, HttpSenderOptions } from './http-post.js';
export { createHttpPostTransport, TargetRefusedError } from './http-post-transport.js';
export type { HttpPostRequest, HttpPostTransport } from './http-post-transport.js';
export { idempotencyKeyHeader } from './notification-sender.js';
export type {
  DeliveryResult,
  NotificationSender,
  NotificationSenders,
  OutgoingNotification,
} from './notification-sender.js';
export { createNotificationSenders } from './notification-senders.js';
export type { NotificationSendersOptions } from './notification-senders.js';
export { createNotifier, defaultNotifierOptions } from './notifier.js';
export type {
  Notifier,
  NotifierDeps,
  NotifierMetrics,
  NotifierOptions,
  NotifierRound,
  NotifierStore,
} from './notifier.js';
export { defaultRetryPolicy, retryDelayMs } from './retry-policy.js';
export type { RetryPolicy } from './retry-policy.js';
export { createSlackSender } from './slack-sender.js';
export { createWebhookSender } from './webhook-sender.js';
export {
  signWebhookBody,
  signatureHeader,
  timestampHeader,
  verifyWebhookSignature,
} from './webhook-signature.js';
export type { VerifyWebhookInput } from './webhook-signature.js';
export { createNotifierMetrics } from './notifier-metrics.js';
