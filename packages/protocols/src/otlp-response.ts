import protojson from 'protobufjs/ext/protojson.js';
import { otlpMetricsTypes } from './proto-types.js';

/** OTLP/HTTP answers in the encoding of the request. */
export type OtlpEncoding = 'protobuf' | 'json';

export type OtlpPartialSuccess = {
  /** Data points not taken (the gateway passes `totalCount(decoded.rejected)`). */
  rejectedDataPoints: number;
  /** Why, for the operator (e.g. `describeCounts(decoded.rejected)`); may be empty. */
  errorMessage?: string;
};

/**
 * The body of an OTLP/HTTP 200: an `ExportMetricsServiceResponse`, protobuf or ProtoJSON bytes
 * (the OTLP spec's `partialSuccess.rejectedDataPoints` is an int64, a string in JSON). With no
 * rejected point and no message, `partial_success` is left unset, as the spec asks of a full
 * success; with rejected points or a message, it is set.
 */
export function encodeOtlpMetricsResponse(
  partialSuccess: OtlpPartialSuccess,
  encoding: OtlpEncoding,
): Uint8Array {
  const type = otlpMetricsTypes().response;
  const errorMessage = partialSuccess.errorMessage ?? '';
  const message = type.create(
    partialSuccess.rejectedDataPoints > 0 || errorMessage !== ''
      ? { partialSuccess: { rejectedDataPoints: partialSuccess.rejectedDataPoints, errorMessage } }
      : {},
  );
  if (encoding === 'json') return Buffer.from(protojson.toJsonString(type, message), 'utf8');
  return type.encode(message).finish();
}
