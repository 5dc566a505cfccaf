import type { DecodedHostSamples } from './decoded-host-samples.js';
import type { PrometheusSample } from './prometheus-series.js';
import { createPrometheusSeriesCollector } from './prometheus-series.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { decodeMessage, remoteWriteTypes } from './proto-types.js';
import type { SnappyDecodeOptions } from './remote-write-v1.js';
import { createSampleCollector } from './sample-collector.js';
import { decompressSnappyBlock } from './snappy-block.js';

/** The fields of io.prometheus.write.v2.Request this decoder reads. */
type WriteV2Request = {
  symbols?: string[];
  timeseries?: {
    labelsRefs?: number[];
    samples?: PrometheusSample[];
    histograms?: unknown[];
    exemplars?: unknown[];
  }[];
};

/**
 * Prometheus remote-write 2.0: a snappy-compressed (block format)
 * `io.prometheus.write.v2.Request`, labels given as references into its symbols table. Same
 * mapping as 1.0; histograms and exemplars are skipped and counted (`skipped.histogram`,
 * `skipped.exemplar`: the response's `X-Prometheus-Remote-Write-Histograms-Written` and
 * `-Exemplars-Written` are then 0, `-Samples-Written` is `accepted`). A label reference outside
 * the symbols table, or an odd number of them, makes the body malformed (the spec's 400).
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
  const collectSeries = createPrometheusSeriesCollector(collector);
  // Label objects reused from series to series (the collector reads them during its call only).
  const labels: { name: string; value: string }[] = [];
  (request.timeseries ?? []).forEach((series, index) => {
    const refs = series.labelsRefs ?? [];
    if (refs.length % 2 !== 0) {
      throw new ProtocolDecodeError(
        'malformed_body',
        protocol,
        `timeseries[${index}] has an odd number of label references (${refs.length}).`,
      );
    }
    const count = refs.length / 2;
    for (let i = 0; i < count; i++) {
      const label = (labels[i] ??= { name: '', value: '' });
      label.name = symbolAt(refs[2 * i]!, index);
      label.value = symbolAt(refs[2 * i + 1]!, index);
    }
    if (labels.length !== count) labels.length = count;
    collectSeries(labels, series.samples ?? []);
    if (series.histograms?.length) collector.skip('histogram', series.histograms.length);
    if (series.exemplars?.length) collector.skip('exemplar', series.exemplars.length);
  });
  return collector.result();
}
