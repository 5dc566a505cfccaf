import { describe, expect, it } from 'vitest';
import { encodeOtlpMetricsResponse } from './otlp-response.js';
import { otlpMetricsTypes } from './proto-types.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('encodeOtlpMetricsResponse', () => {
  it('leaves partial_success unset on a full success', () => {
    expect(text(encodeOtlpMetricsResponse({ rejectedDataPoints: 0 }, 'json'))).toBe('{}');
    expect(
      encodeOtlpMetricsResponse({ rejectedDataPoints: 0, errorMessage: '' }, 'protobuf'),
    ).toHaveLength(0);
  });

  it('writes rejected points and the message in ProtoJSON, the int64 as a string', () => {
    const body = encodeOtlpMetricsResponse(
      { rejectedDataPoints: 3, errorMessage: '2 non_finite_value, 1 no_host' },
      'json',
    );
    expect(JSON.parse(text(body))).toEqual({
      partialSuccess: { rejectedDataPoints: '3', errorMessage: '2 non_finite_value, 1 no_host' },
    });
  });

  it('writes an ExportMetricsServiceResponse that decodes back', () => {
    const body = encodeOtlpMetricsResponse(
      { rejectedDataPoints: 5, errorMessage: '5 no_host' },
      'protobuf',
    );
    const type = otlpMetricsTypes().response;
    expect(type.toObject(type.decode(body), { longs: Number })).toEqual({
      partialSuccess: { rejectedDataPoints: 5, errorMessage: '5 no_host' },
    });
  });

  it('sets partial_success for a warning without rejected points', () => {
    const body = encodeOtlpMetricsResponse({ rejectedDataPoints: 0, errorMessage: 'note' }, 'json');
    expect(JSON.parse(text(body))).toEqual({ partialSuccess: { errorMessage: 'note' } });
  });
});
