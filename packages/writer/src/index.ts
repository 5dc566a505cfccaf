export type { SampleSink, SampleWriter } from './sample-writer.js';
export { createSampleWriter, toSampleWrite } from './sample-writer.js';
export { createWriterMetrics } from './writer-metrics.js';
