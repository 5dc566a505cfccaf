export type { BatchAccumulator } from './batch-accumulator.js';
export { createBatchAccumulator } from './batch-accumulator.js';
export type { DecodedSample, SnapshotJson } from './decode-sample-record.js';
export type {
  PendingSample,
  SampleSink,
  SampleWriterDeps,
  SampleWriterOptions,
  WriterMetrics,
} from './sample-writer.js';
export { createSampleWriter } from './sample-writer.js';
export { createWriterMetrics } from './writer-metrics.js';
