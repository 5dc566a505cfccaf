import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '@monitor/platform';
import {
  fromZodError,
  rateLimited,
  sendProblem,
  unsupportedMediaType,
  validationError,
} from '@monitor/platform';
import type { IngestPayload, SampleMessage } from '@monitor/schemas';
import { checkSampleTime, parseIngestBody } from '@monitor/schemas';
import { readBody } from './read-body.js';
import { refuseAfterDrain } from './refuse-after-drain.js';
import type { SeriesRefusalReason } from './series-policy.js';
import { policeSeries } from './series-policy.js';
import { createWriteAdmission } from './write-admission.js';
import type { WriteDeps } from './write-steps.js';
import { bodyReadError, publishSamples } from './write-steps.js';

export type IngestMetrics = {
  /** Called once per accepted request. */
  accepted(payloads: number, samples: number): void;
  rejected(status: number): void;
  seriesRefused(reason: SeriesRefusalReason, count: number): void;
};

export type IngestHandlerDeps = WriteDeps & { metrics: IngestMetrics };

/**
 * POST /api/v1/ingest on plain node:http: this is the hot path, and express's per-request cost
 * is several times that of the work itself (docs/benchmarks.md). The order of checks is the
 * contract's: the key before the body is read, then the rate limit, then the body.
 * Answers 200 only once the bus acknowledged every message of the request.
 */
export function createIngestHandler(deps: IngestHandlerDeps) {
  const log = deps.logger;
  const admit = createWriteAdmission({
    authenticator: deps.authenticator,
    rateLimiter: deps.rateLimiter,
    rejected: (status) => deps.metrics.rejected(status),
  });

  function fail(res: ServerResponse, err: AppError): void {
    deps.metrics.rejected(sendProblem(res, err).status);
  }

  /** A refusal before the body was read to its end: the rest is dropped, then the connection closed. */
  async function refuse(req: IncomingMessage, res: ServerResponse, err: AppError): Promise<void> {
    deps.metrics.rejected(await refuseAfterDrain(req, res, err));
  }

  return async function handleIngest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = await admit(req, res);
    if (key === undefined) return;
    if (!isJson(req.headers['content-type'])) return refuse(req, res, unsupportedMediaType());

    const body = await readBody(req, deps.maxBodyBytes);
    if (!body.ok) {
      const err = bodyReadError(body, deps.maxBodyBytes, ['gzip']);
      return err === undefined ? undefined : refuse(req, res, err);
    }

    let json: unknown;
    try {
      json = JSON.parse(body.body.toString('utf8'));
    } catch {
      return fail(res, validationError([{ path: '', message: 'the body is not valid JSON' }]));
    }
    const parsed = parseIngestBody(json);
    if (!parsed.success) return fail(res, fromZodError(parsed.error));

    const receivedMs = deps.nowMs();
    const messages: SampleMessage[] = [];
    const timeIssues: { path: string; message: string }[] = [];
    let samples = 0;
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
      samples += Object.keys(payload.metrics).length;
      messages.push(toMessage(key.orgId, payload, timeMs, receivedMs));
    });
    if (timeIssues.length > 0) return fail(res, validationError(timeIssues));

    const policed = policeSeries(deps.seriesPolicy, deps, key.orgId, messages);
    if (policed.refusal !== undefined) {
      if (policed.refusal.reason === 'new_series_limit') {
        return fail(res, rateLimited(policed.retryAfterSeconds, policed.refusal.detail));
      }
      return fail(res, validationError([{ path: 'tags', message: policed.refusal.detail }]));
    }
    if (policed.kept !== messages) samples = countMetrics(policed.kept);

    const unpublished = await publishSamples(deps, log, key.orgId, policed.kept);
    if (unpublished !== undefined) return fail(res, unpublished);
    deps.metrics.accepted(policed.kept.length, samples);
    const response = JSON.stringify({ status: 'ok', events_accepted: samples });
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(response),
    });
    res.end(response);
  };
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
