export type { ApiMethod, ApiOperation, ApiResponseSpec } from './operation-spec.js';
export { apiBasePath, noContent } from './operation-spec.js';
export {
  alertPath,
  alertRulePath,
  alertRulesPath,
  alertsPath,
  apiOperations,
  findApiOperation,
  investigationPath,
  investigationsPath,
  openApiPath,
  serviceMetricsPath,
  servicePath,
  servicesPath,
} from './api-operations.js';
export type { ApiRouterDeps } from './api-router.js';
export { createApiRouter } from './api-router.js';
export type { OpenApiDocument } from './openapi-document.js';
export { createOpenApiDocument, toOpenApiPath } from './openapi-document.js';
export { pageOf } from './page-of.js';
export type { NotificationChannelsRouterDeps } from './notification-channels-router.js';
export { createNotificationChannelsRouter } from './notification-channels-router.js';
export {
  alertNotificationsPath,
  notificationChannelPath,
  notificationChannelsPath,
  notificationOperations,
} from './notification-operations.js';
