import type { IncomingMessage } from 'node:http';
import { badRequest, unsupportedMediaType } from '@monitor/platform';
import type { InfluxApi, OtlpEncoding } from '@monitor/protocols';
import {
  decodeCollectdJson,
  decodeInfluxLineProtocol,
  decodeOtlpMetricsJson,
  decodeOtlpMetricsProtobuf,
  decodeRemoteWriteV1,
  decodeRemoteWriteV2,
  describeCounts,
  encodeOtlpMetricsResponse,
  parseInfluxPrecision,
  totalCount,
} from '@monitor/protocols';
import type { AgentWriteDecoder, AgentWriteRoute } from './agent-write-handler.js';

/** The paths of the agent protocols (docs/api.md#agent-protocols). */
export const agentWritePaths = {
  remoteWrite: '/api/v1/write',
  otlpMetrics: '/api/v1/otlp/v1/metrics',
  influxV1: '/api/v1/influx/write',
  influxV2: '/api/v1/influx/api/v2/write',
  collectd: '/api/v1/collectd',
} as const;

const noContent = { status: 204 } as const;

/** The media type and its parameters, lower-cased (`application/x-protobuf;proto=…`). */
function contentTypeOf(req: IncomingMessage): { type: string; params: Map<string, string> } {
  const [type = '', ...rest] = (req.headers['content-type'] ?? '').split(';');
  const params = new Map<string, string>();
  for (const part of rest) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    const value = part
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    params.set(part.slice(0, equals).trim().toLowerCase(), value);
  }
  return { type: type.trim().toLowerCase(), params };
}

const remoteWriteV1Message = 'prometheus.WriteRequest';
const remoteWriteV2Message = 'io.prometheus.write.v2.Request';

/**
 * Prometheus remote-write, 1.0 and 2.0 on one path, by the `proto` parameter of the content
 * type (absent: 1.0). The body must be snappy's block format, which the decoder undoes after
 * checking its declared size against the body limit (a snappy bomb is refused unopened).
 */
const remoteWrite: AgentWriteRoute = {
  protocol: 'remote_write',
  rawEncodings: ['snappy'],
  select(req) {
    const { type, params } = contentTypeOf(req);
    const message = params.get('proto') ?? remoteWriteV1Message;
    const expected = `application/x-protobuf (proto ${remoteWriteV1Message} or ${remoteWriteV2Message})`;
    if (type !== 'application/x-protobuf') return unsupportedMediaType(expected);
    if ((req.headers['content-encoding'] ?? '').toLowerCase().trim() !== 'snappy') {
      return unsupportedMediaType(`${expected} with Content-Encoding: snappy`);
    }
    if (message === remoteWriteV1Message) {
      return { decode: decodeRemoteWriteV1, answer: () => noContent };
    }
    if (message === remoteWriteV2Message) {
      return {
        decode: decodeRemoteWriteV2,
        answer: (result) => ({
          status: 204,
          headers: {
            'X-Prometheus-Remote-Write-Samples-Written': String(result.accepted),
            'X-Prometheus-Remote-Write-Histograms-Written': String(result.histograms),
            'X-Prometheus-Remote-Write-Exemplars-Written': String(result.exemplars),
          },
        }),
      };
    }
    return unsupportedMediaType(expected);
  },
};

/** OTLP/HTTP metrics: protobuf or JSON, answered in the request's encoding. */
const otlpMetrics: AgentWriteRoute = {
  protocol: 'otlp',
  select(req) {
    const { type } = contentTypeOf(req);
    const encoding: OtlpEncoding | undefined =
      type === 'application/x-protobuf'
        ? 'protobuf'
        : type === 'application/json'
          ? 'json'
          : undefined;
    if (encoding === undefined)
      return unsupportedMediaType('application/x-protobuf or application/json');
    return {
      decode: encoding === 'protobuf' ? decodeOtlpMetricsProtobuf : decodeOtlpMetricsJson,
      answer: (result) => ({
        status: 200,
        headers: { 'Content-Type': type },
        body: encodeOtlpMetricsResponse(
          {
            // Exemplars are not data points.
            rejectedDataPoints:
              totalCount(result.rejected) - (result.rejected.invalid_exemplar ?? 0),
            errorMessage: describeCounts(result.rejected),
          },
          encoding,
        ),
      }),
    };
  },
};

/** Influx line protocol; any content type (Telegraf and the clients send text/plain or none). */
function influx(api: InfluxApi): AgentWriteRoute {
  return {
    protocol: 'influx',
    select(_req, query) {
      const precision = parseInfluxPrecision(query.get('precision') ?? undefined, api);
      if (precision === undefined) {
        const known = api === 'v1' ? 'n, ns, u, us, ms, s, m or h' : 'ns, us, ms or s';
        return badRequest(`The query parameter precision must be ${known}.`);
      }
      const decoder: AgentWriteDecoder = {
        decode: (body, options) => decodeInfluxLineProtocol(body, { ...options, precision }),
        answer: () => noContent,
      };
      return decoder;
    },
  };
}

/** collectd's write_http plugin, `Format "JSON"`. */
const collectd: AgentWriteRoute = {
  protocol: 'collectd',
  select(req) {
    if (contentTypeOf(req).type !== 'application/json') return unsupportedMediaType();
    return { decode: decodeCollectdJson, answer: () => ({ status: 200 }) };
  },
};

/** Every agent protocol's route by its path. */
export const agentWriteRoutes: ReadonlyMap<string, AgentWriteRoute> = new Map([
  [agentWritePaths.remoteWrite, remoteWrite],
  [agentWritePaths.otlpMetrics, otlpMetrics],
  [agentWritePaths.influxV1, influx('v1')],
  [agentWritePaths.influxV2, influx('v2')],
  [agentWritePaths.collectd, collectd],
]);
