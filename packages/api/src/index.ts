export { findApiRoute } from './api-routes.js';
export { createApiRouter } from './api-router.js';
export { toOpenApiPath } from './openapi-document.js';
export { createPrometheusRouter } from './prometheus/prometheus-router.js';
export { createRulerRouter } from './prometheus/ruler-router.js';
export type { RangeQueryCache } from './prometheus/range-query-cache.js';
export {
  combineLateWrites,
  createInProcessStepsStore,
  createRangeQueryCache,
  snapshotVisibility,
} from './prometheus/range-query-cache.js';
export { createRedisStepsStore } from './prometheus/redis-steps-store.js';
