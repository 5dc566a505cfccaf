export { createAlertmanagerResender } from './alertmanager-resender.js';
export { createNotificationSenders } from './notification-senders.js';
export { createNotifier, defaultNotifierOptions } from './notifier.js';
export { createNotifierMetrics } from './notifier-metrics.js';
export { createRuleAlertResender } from './rule-alert-resender.js';
