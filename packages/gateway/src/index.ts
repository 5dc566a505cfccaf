export type { GatewayMetrics } from './gateway-metrics.js';
export { createGatewayMetrics } from './gateway-metrics.js';
export { createGatewayListener } from './gateway-listener.js';
export type { IngestHandlerDeps, IngestMetrics, IngestRateLimiter } from './ingest-handler.js';
export { createIngestHandler } from './ingest-handler.js';
export { createIngestRateLimiter } from './ingest-rate-limiter.js';
export type { ReadBodyResult } from './read-body.js';
export { readBody } from './read-body.js';
