import type { DecodeOptions, DecodedHostSamples } from './decoded-host-samples.js';
import type { PrometheusExemplar, PrometheusLabel, PrometheusSample } from './prometheus-series.js';
import { createPrometheusSeriesCollector } from './prometheus-series.js';
import { decodeMessage, remoteWriteTypes } from './proto-types.js';
import type { RemoteWriteHistogram } from './native-histogram.js';
import { createSampleCollector } from './sample-collector.js';
import { decompressSnappyBlock } from './snappy-block.js';

/** Options of the snappy-compressed protocols. */
export type SnappyDecodeOptions = DecodeOptions & {
  /** Refuse a body that declares more decompressed bytes than this (`body_too_large`). */
  maxDecodedBytes: number;
};

/** The fields of prompb's WriteRequest this decoder reads (repeated fields may be absent). */
type WriteRequest = {
  timeseries?: {
    labels?: PrometheusLabel[];
    samples?: PrometheusSample[];
    exemplars?: PrometheusExemplar[];
    histograms?: RemoteWriteHistogram[];
  }[];
};

/**
 * Prometheus remote-write 1.0: a snappy-compressed (block format) `prometheus.WriteRequest`
 * body, as received (after any HTTP Content-Encoding was undone), exemplars and native
 * histograms included (a histogram is checked first, and refused and counted where Prometheus
 * would refuse it). Throws `ProtocolDecodeError` when the body is not such a message or
 * decompresses too large.
 */
export function decodeRemoteWriteV1(
  body: Uint8Array,
  options: SnappyDecodeOptions,
): DecodedHostSamples {
  const protocol = 'prometheus_remote_write_v1';
  const bytes = decompressSnappyBlock(body, options.maxDecodedBytes, protocol);
  const request = decodeMessage<WriteRequest>(remoteWriteTypes().writeRequest, bytes, protocol);
  const collector = createSampleCollector(options);
  const collectSeries = createPrometheusSeriesCollector(collector, options);
  for (const series of request.timeseries ?? []) {
    collectSeries(
      series.labels ?? [],
      series.samples ?? [],
      series.exemplars ?? [],
      series.histograms ?? [],
    );
  }
  return collector.result();
}
