export { createGatewayMetrics } from './gateway-metrics.js';
export { createGatewayListener } from './gateway-listener.js';
export { createIngestHandler } from './ingest-handler.js';
export { createIngestRateLimiter } from './ingest-rate-limiter.js';
