export type { ApiMethod, ApiOperation, ApiResponseSpec } from './api-operations.js';
export {
  apiBasePath,
  apiOperations,
  findApiOperation,
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
