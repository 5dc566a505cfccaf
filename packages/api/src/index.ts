export type { ApiMethod, ApiResponseSpec, ApiRoute } from './api-route.js';
export { apiBasePath, noContent } from './api-route.js';
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
export {
  alertNotificationsPath,
  notificationChannelPath,
  notificationChannelsPath,
  notificationRoutes,
} from './notification-routes.js';
