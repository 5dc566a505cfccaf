export type { SampleSink } from './sample-writer.js';
export { createSampleWriter } from './sample-writer.js';
export { createWriterMetrics } from './writer-metrics.js';
