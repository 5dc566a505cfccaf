import type { AppError } from '@monitor/platform';
import { fromZodError, unsupportedMediaType, validationError } from '@monitor/platform';
import type { IngestPayload, SampleMessage } from '@monitor/schemas';
import { checkSampleTime, parseIngestBody } from '@monitor/schemas';
import type { SeriesRefusalReason } from './series-policy.js';
import { createWritePipeline } from './write-pipeline.js';
import type { WriteDeps } from './write-steps.js';

export type IngestMetrics = {
  /** Called once per accepted request. */
  accepted(payloads: number, samples: number): void;
  rejected(status: number): void;
  seriesRefused(reason: SeriesRefusalReason, count: number): void;
};

export type IngestHandlerDeps = WriteDeps & { metrics: IngestMetrics };

/**
 * POST /api/v1/ingest on plain node:http: this is the hot path, and express's per-request cost
 * is several times that of the work itself (docs/benchmarks/compare.md). The order of checks is the
 * contract's: the key before the body is read, then the rate limit, then the body.
 * Answers 200 only once the bus acknowledged every message of the request.
 */
export function createIngestHandler(deps: IngestHandlerDeps) {
  return createWritePipeline(
    {
      logger: deps.logger,
      challenge: false,
      rawEncodings: [],
      select: (req) => (isJson(req.headers['content-type']) ? decode : unsupportedMediaType()),
      seriesRefused: (detail) => validationError([{ path: 'tags', message: detail }]),
      rejected: (status) => deps.metrics.rejected(status),
    },
    deps,
  );

  function decode(body: Buffer, { orgId, receivedMs }: { orgId: string; receivedMs: number }) {
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return refused(validationError([{ path: '', message: 'the body is not valid JSON' }]));
    }
    const parsed = parseIngestBody(json);
    if (!parsed.success) return refused(fromZodError(parsed.error));

    const messages: SampleMessage[] = [];
    const timeIssues: { path: string; message: string }[] = [];
    parsed.data.forEach((payload, index) => {
      const timeMs = payload.timestamp === undefined ? receivedMs : Date.parse(payload.timestamp);
      const problem = checkSampleTime(timeMs, receivedMs, deps.rawRetentionMs);
      if (problem !== undefined) {
        timeIssues.push({
          path: Array.isArray(json) ? `[${index}].timestamp` : 'timestamp',
          message: problem,
        });
        return;
      }
      messages.push(toMessage(orgId, payload, timeMs, receivedMs));
    });
    if (timeIssues.length > 0) return refused(validationError(timeIssues));
    return {
      ok: true as const,
      messages,
      answer(kept: readonly SampleMessage[]) {
        const samples = countMetrics(kept);
        deps.metrics.accepted(kept.length, samples);
        return {
          status: 200,
          headers: { 'Content-Type': 'application/json; charset=utf-8' },
          body: JSON.stringify({ status: 'ok', events_accepted: samples }),
        };
      },
    };
  }
}

function refused(error: AppError) {
  return { ok: false as const, error };
}

function countMetrics(messages: readonly SampleMessage[]): number {
  let count = 0;
  for (const message of messages) count += Object.keys(message.metrics).length;
  return count;
}

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

function toMessage(
  orgId: string,
  payload: IngestPayload,
  timeMs: number,
  receivedMs: number,
): SampleMessage {
  return {
    v: 1,
    org_id: orgId,
    host: payload.host,
    time_ms: timeMs,
    received_ms: receivedMs,
    metrics: payload.metrics,
    tags: payload.tags ?? {},
    containers: payload.docker_containers ?? [],
    processes: payload.processes ?? [],
  };
}
