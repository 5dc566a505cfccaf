export { createGatewayMetrics } from './gateway-metrics.js';
export { createGatewayListener } from './gateway-listener.js';
export { createIngestHandler } from './ingest-handler.js';
export { createIngestRateLimiter } from './ingest-rate-limiter.js';
export { agentWriteRoutes } from './agent-routes.js';
export { createAgentWriteHandler } from './agent-write-handler.js';
export { createSeriesPolicy } from './series-policy.js';
