import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';
import type { AgentProtocol } from './protocol-decode-error.js';
import { StringTable } from '@monitor/schemas';
import { InterningReader } from './interning-reader.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';

/**
 * The protobuf message types of the agent protocols, from the upstream .proto files vendored in
 * ../proto (see proto/README.md). Each set is parsed once, on first use, into a reflection
 * Root; protobufjs generates the decoder and encoder code of each type once, so decoding costs
 * what static code would.
 */

const protoDirectory = fileURLToPath(new URL('../proto/', import.meta.url));

function loadRoot(directory: string, files: string[]): protobuf.Root {
  const root = new protobuf.Root();
  // Imports name files relative to their tree's root (`import "types.proto"`).
  root.resolvePath = (_origin, target) => path.join(protoDirectory, directory, target);
  root.loadSync(files);
  root.resolveAll();
  return root;
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

export const remoteWriteTypes = once(() => {
  const v1 = loadRoot('prometheus', ['remote.proto']);
  const v2 = loadRoot('prometheus', ['io/prometheus/write/v2/types.proto']);
  return {
    writeRequest: v1.lookupType('prometheus.WriteRequest'),
    writeV2Request: v2.lookupType('io.prometheus.write.v2.Request'),
  };
});

/** Remote read's messages, in the same remote.proto (identical to Prometheus v2.42.0's). */
export const remoteReadTypes = once(() => {
  const root = loadRoot('prometheus', ['remote.proto']);
  return {
    readRequest: root.lookupType('prometheus.ReadRequest'),
    readResponse: root.lookupType('prometheus.ReadResponse'),
    chunkedReadResponse: root.lookupType('prometheus.ChunkedReadResponse'),
    histogram: root.lookupType('prometheus.Histogram'),
  };
});

export const otlpMetricsTypes = once(() => {
  const root = loadRoot('opentelemetry', [
    'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
  ]);
  return {
    request: root.lookupType(
      'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
    ),
    response: root.lookupType(
      'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse',
    ),
  };
});

/**
 * The label names and values agents send again in every request, shared by every decode of this
 * process: a bounded cache (16,384 strings of at most 64 characters) whose strings equal what
 * protobufjs would build.
 */
const decodedStrings = new StringTable(16_384);

/**
 * Decodes `bytes` as `type`, or throws the protocol's `malformed_body` error. The cast to the
 * caller's view `T` is safe as far as the view only names fields of the .proto with the types
 * protobufjs gives them (the tests decode what the same types encoded).
 */
export function decodeMessage<T>(
  type: protobuf.Type,
  bytes: Uint8Array,
  protocol: AgentProtocol,
): T {
  try {
    return type.decode(new InterningReader(bytes, decodedStrings)) as unknown as T;
  } catch (err) {
    throw new ProtocolDecodeError(
      'malformed_body',
      protocol,
      `The body is not a valid ${type.name} message: ${err instanceof Error ? err.message : String(err)}.`,
      { cause: err },
    );
  }
}
