export type { Container, IngestBody, IngestPayload, IngestResponse, Process } from './ingest.js';
export {
  checkSampleTime,
  containerSchema,
  ingestBatchSchema,
  ingestBodySchema,
  ingestLimits,
  ingestPayloadSchema,
  ingestResponseSchema,
  metricNamePattern,
  parseIngestBody,
  processSchema,
} from './ingest.js';
export type { DecodeResult, SampleMessage } from './sample-message.js';
export {
  decodeSampleMessage,
  encodeSampleMessage,
  sampleMessageKey,
  sampleMessageSchema,
} from './sample-message.js';
