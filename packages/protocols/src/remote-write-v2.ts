import type { DecodedHostSamples } from './decoded-host-samples.js';
import type { PrometheusExemplar, PrometheusLabel, PrometheusSample } from './prometheus-series.js';
import { createPrometheusSeriesCollector } from './prometheus-series.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { decodeMessage, remoteWriteTypes } from './proto-types.js';
import type { RemoteWriteHistogram } from './native-histogram.js';
import type { SnappyDecodeOptions } from './remote-write-v1.js';
import { createSampleCollector } from './sample-collector.js';
import { decompressSnappyBlock } from './snappy-block.js';

/** The fields of io.prometheus.write.v2.Request this decoder reads. */
type WriteV2Request = {
  symbols?: string[];
  timeseries?: {
    labelsRefs?: number[];
    samples?: PrometheusSample[];
    histograms?: RemoteWriteHistogram[];
    exemplars?: (PrometheusSample & { labelsRefs?: number[] })[];
  }[];
};

/**
 * Prometheus remote-write 2.0: a snappy-compressed (block format)
 * `io.prometheus.write.v2.Request`, labels given as references into its symbols table. Same
 * mapping as 1.0, exemplars and native histograms included. A label reference outside the symbols table, or an odd number of them, makes the body malformed
 * (the spec's 400).
 */
export function decodeRemoteWriteV2(
  body: Uint8Array,
  options: SnappyDecodeOptions,
): DecodedHostSamples {
  const protocol = 'prometheus_remote_write_v2';
  const bytes = decompressSnappyBlock(body, options.maxDecodedBytes, protocol);
  const request = decodeMessage<WriteV2Request>(remoteWriteTypes().writeV2Request, bytes, protocol);
  const symbols = request.symbols ?? [];
  const symbolAt = (ref: number, index: number): string => {
    const symbol = symbols[ref];
    if (symbol === undefined) {
      throw new ProtocolDecodeError(
        'malformed_body',
        protocol,
        `timeseries[${index}] refers to symbol ${ref}, but the symbols table has ${symbols.length}.`,
      );
    }
    return symbol;
  };
  const collector = createSampleCollector(options);
  const collectSeries = createPrometheusSeriesCollector(collector, options);
  // Label objects reused from series to series (the collector reads them during its call only).
  const labels: { name: string; value: string }[] = [];
  /** Resolves `refs` into `into` (emptied first), or throws the spec's malformed body. */
  const resolveLabels = (refs: readonly number[], index: number, into: PrometheusLabel[]) => {
    if (refs.length % 2 !== 0) {
      throw new ProtocolDecodeError(
        'malformed_body',
        protocol,
        `timeseries[${index}] has an odd number of label references (${refs.length}).`,
      );
    }
    const count = refs.length / 2;
    for (let i = 0; i < count; i++) {
      const label = (into[i] ??= { name: '', value: '' });
      label.name = symbolAt(refs[2 * i]!, index);
      label.value = symbolAt(refs[2 * i + 1]!, index);
    }
    if (into.length !== count) into.length = count;
    return into;
  };
  (request.timeseries ?? []).forEach((series, index) => {
    resolveLabels(series.labelsRefs ?? [], index, labels);
    const exemplars = (series.exemplars ?? []).map((exemplar): PrometheusExemplar => ({
      value: exemplar.value,
      timestamp: exemplar.timestamp,
      labels: resolveLabels(exemplar.labelsRefs ?? [], index, []),
    }));
    collectSeries(labels, series.samples ?? [], exemplars, series.histograms ?? []);
  });
  return collector.result();
}
