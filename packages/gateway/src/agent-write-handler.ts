import type { IncomingMessage } from 'node:http';
import { AppError, badRequest, payloadTooLarge } from '@monitor/platform';
import type { DecodedHostSamples, DecodeOptions } from '@monitor/protocols';
import { ProtocolDecodeError, describeCounts, totalCount } from '@monitor/protocols';
import type { SampleMessage } from '@monitor/schemas';
import type { SeriesRefusalReason } from './series-policy.js';
import type { DecodedWrite } from './write-pipeline.js';
import { createWritePipeline } from './write-pipeline.js';
import type { WriteDeps } from './write-steps.js';

/** How one request of an agent protocol is decoded and answered. */
export type AgentWriteDecoder = {
  /** Decodes the body as read (any Content-Encoding in `rawEncodings` still applied). */
  decode(
    body: Buffer,
    options: DecodeOptions & { maxDecodedBytes: number; maxHistogramBuckets: number },
  ): DecodedHostSamples;
  /** The success answer, once every sample is on the bus. */
  answer(result: DecodedHostSamples): {
    status: number;
    headers?: Record<string, string>;
    body?: Uint8Array;
  };
};

/** One agent protocol's endpoint. */
export type AgentWriteRoute = {
  /** For metrics and logs: `remote_write`, `otlp`, `influx`, `collectd`. */
  protocol: string;
  /** Content-Encodings the decoder undoes itself (read as received), besides identity and gzip. */
  rawEncodings?: readonly string[];
  /** The decoder for this request (content type, query), or the refusal to answer. */
  select(req: IncomingMessage, query: URLSearchParams): AgentWriteDecoder | AppError;
};

export type AgentWriteMetrics = {
  seriesRefused(reason: SeriesRefusalReason, count: number): void;
  points(
    protocol: string,
    outcome: 'accepted' | 'rejected' | 'skipped',
    reason: string,
    count: number,
  ): void;
};

export type AgentWriteHandlerDeps = WriteDeps & { metrics: AgentWriteMetrics };

/**
 * A write of an agent protocol (remote-write, OTLP, Influx line protocol, collectd): the same
 * key, scope and rate limit as /ingest, the same body limit after decompression, the same
 * durability (answered only once the bus has every sample), and samples published as /ingest
 * publishes them, but with their tags as their series' labels and any staleness markers.
 * Points that cannot be taken are counted per reason and logged; a body none of whose points
 * can be taken is a 400, which these senders do not retry.
 */
export function createAgentWriteHandler(route: AgentWriteRoute, deps: AgentWriteHandlerDeps) {
  const log = deps.logger.child({ protocol: route.protocol });
  return createWritePipeline(
    {
      logger: log,
      challenge: true,
      rawEncodings: route.rawEncodings ?? [],
      select(req) {
        const decoder = route.select(req, queryOf(req.url));
        return decoder instanceof AppError
          ? decoder
          : (body, context) => decodeWith(decoder, body, context);
      },
      seriesRefused: (detail) => badRequest(detail),
      rejected: () => undefined,
    },
    deps,
  );

  function decodeWith(
    decoder: AgentWriteDecoder,
    body: Buffer,
    { orgId, receivedMs }: { orgId: string; receivedMs: number },
  ): DecodedWrite {
    let decoded: DecodedHostSamples;
    try {
      decoded = decoder.decode(body, {
        nowMs: receivedMs,
        rawRetentionMs: deps.rawRetentionMs,
        maxDecodedBytes: deps.maxBodyBytes,
        maxHistogramBuckets: deps.maxHistogramBuckets,
      });
    } catch (err) {
      if (!(err instanceof ProtocolDecodeError)) throw err;
      return err.code === 'body_too_large'
        ? { ok: false, error: payloadTooLarge(deps.maxBodyBytes), bodyLeft: true }
        : { ok: false, error: badRequest(err.message) };
    }
    count(decoded);
    const rejected = totalCount(decoded.rejected);
    if (rejected > 0) {
      log.warn(
        { orgId, accepted: decoded.accepted, rejected: decoded.rejected },
        'points of an agent write could not be taken',
      );
    }
    // Prometheus fails no request for its exemplars: those alone refused is no reason for a 400.
    const rejectedPoints = rejected - (decoded.rejected.invalid_exemplar ?? 0);
    if (decoded.samples.length === 0 && rejectedPoints > 0) {
      return {
        ok: false,
        error: badRequest(
          `No point of the body could be taken: ${describeCounts(decoded.rejected)}.`,
        ),
      };
    }
    // An agent's tags are its series' labels (/ingest's belong to the host). Exemplars and
    // histograms go in messages of their own: a writer or evaluator older than them dead-letters
    // a binary message that carries any (an unknown flag), and must lose no sample with them
    // during an upgrade.
    const messages: SampleMessage[] = [];
    for (const sample of decoded.samples) {
      const message: SampleMessage = {
        v: 1,
        org_id: orgId,
        host: sample.host,
        time_ms: sample.timeMs,
        received_ms: receivedMs,
        metrics: sample.metrics,
        tags: sample.tags,
        tags_label_series: true,
        ...(sample.staleMetrics === undefined ? {} : { stale_metrics: sample.staleMetrics }),
        containers: [],
        processes: [],
      };
      if (sample.staleMetrics !== undefined || hasMetrics(sample.metrics)) messages.push(message);
      if (sample.exemplars !== undefined) {
        messages.push({
          ...message,
          metrics: {},
          stale_metrics: undefined,
          exemplars: sample.exemplars,
        });
      }
      if (sample.histograms !== undefined) {
        messages.push({
          ...message,
          metrics: {},
          stale_metrics: undefined,
          histograms: sample.histograms,
        });
      }
    }
    return {
      ok: true,
      messages,
      answer: () => {
        const answer = decoder.answer(decoded);
        return { status: answer.status, headers: { ...answer.headers }, body: answer.body };
      },
    };
  }

  function count(decoded: DecodedHostSamples): void {
    const { protocol } = route;
    const taken = decoded.accepted + decoded.histograms;
    if (taken > 0) deps.metrics.points(protocol, 'accepted', '', taken);
    for (const [reason, n] of Object.entries(decoded.rejected)) {
      if (n !== undefined && n > 0) deps.metrics.points(protocol, 'rejected', reason, n);
    }
    for (const [reason, n] of Object.entries(decoded.skipped)) {
      if (n !== undefined && n > 0) deps.metrics.points(protocol, 'skipped', reason, n);
    }
  }
}

function queryOf(url: string | undefined): URLSearchParams {
  const start = url?.indexOf('?') ?? -1;
  return new URLSearchParams(start === -1 || url === undefined ? '' : url.slice(start + 1));
}

/** Whether a sample holds any value (without building its list of names). */
function hasMetrics(metrics: Readonly<Record<string, number>>): boolean {
  for (const name in metrics) if (Object.hasOwn(metrics, name)) return true;
  return false;
}
