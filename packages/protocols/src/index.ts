export type {
  DecodeOptions,
  DecodedHostSamples,
  ProtocolSample,
  RejectReason,
  SkipReason,
} from './decoded-host-samples.js';
export { describeCounts, rejectReasons, skipReasons, totalCount } from './decoded-host-samples.js';
export type { AgentProtocol, ProtocolErrorCode } from './protocol-decode-error.js';
export { LineProtocolSyntaxError, ProtocolDecodeError } from './protocol-decode-error.js';
export type { SnappyDecodeOptions } from './remote-write-v1.js';
export { decodeRemoteWriteV1 } from './remote-write-v1.js';
export { decodeRemoteWriteV2 } from './remote-write-v2.js';
export { hostOfLabels } from './prometheus-series.js';
export { decodeOtlpMetricsJson, decodeOtlpMetricsProtobuf } from './otlp-metrics.js';
export type { OtlpEncoding, OtlpPartialSuccess } from './otlp-response.js';
export { encodeOtlpMetricsResponse } from './otlp-response.js';
export type { LineProtocolFieldValue, LineProtocolPoint } from './line-protocol.js';
export { parseLineProtocol } from './line-protocol.js';
export type { InfluxApi, InfluxDecodeOptions, InfluxPrecision } from './influx-write.js';
export { decodeInfluxLineProtocol, parseInfluxPrecision } from './influx-write.js';
export { decodeCollectdJson } from './collectd-json.js';
export type { ReadQuery, RemoteReadRequest } from './remote-read.js';
export {
  decodeRemoteReadRequest,
  encodeChunkedReadFrames,
  encodeRemoteReadSamples,
  remoteReadContentTypes,
} from './remote-read.js';
export { decodeXorChunk, encodeXorChunks } from './xor-chunk.js';
