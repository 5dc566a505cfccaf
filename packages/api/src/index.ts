export type { ApiMethod, ApiResponseSpec, ApiRoute } from './api-route.js';
export { apiBasePath, noContent } from './api-route.js';
export type { ApiRouteDeps } from './api-routes.js';
export { apiRoutes, findApiRoute, openApiPath } from './api-routes.js';
export { alertPath, alertsPath } from './alert-routes.js';
export { alertRulePath, alertRulesPath } from './alert-rule-routes.js';
export { investigationPath, investigationsPath } from './investigation-routes.js';
export { serviceMetricsPath, servicePath, servicesPath } from './service-routes.js';
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
