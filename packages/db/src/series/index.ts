// PromQL's SeriesSource over the database: its own entry point (`@monitor/db/series`) for the
// api's Prometheus routes, the one audience that reads series by label matchers.
export { createPrometheusSeriesSource } from './prometheus-series-source.js';
export { createFloat64SlabPool } from './binary-arrays.js';
export type { Float64SlabLease } from './binary-arrays.js';
export { createSourceTiersReader } from './source-tiers.js';
