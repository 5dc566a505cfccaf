import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Publisher } from '@monitor/bus';
import type { Logger } from '@monitor/platform';
import {
  AppError,
  dependencyUnavailable,
  fromZodError,
  payloadTooLarge,
  rateLimited,
  sendProblem,
  unsupportedMediaType,
  validationError,
} from '@monitor/platform';
import type { IngestPayload, SampleMessage } from '@monitor/schemas';
import {
  checkSampleTime,
  encodeSampleMessage,
  parseIngestBody,
  sampleMessageKey,
} from '@monitor/schemas';
import { readBody } from './read-body.js';
import type { SeriesPolicy, SeriesRefusalReason } from './series-policy.js';
import { policeSeries } from './series-policy.js';
import type { IngestRateLimiter } from './write-admission.js';
import { createWriteAdmission } from './write-admission.js';

export type IngestMetrics = {
  /** Called once per accepted request. */
  accepted(payloads: number, samples: number): void;
  rejected(status: number): void;
  seriesRefused(reason: SeriesRefusalReason, count: number): void;
};

export type IngestHandlerDeps = {
  authenticator: ApiKeyAuthenticator;
  rateLimiter: IngestRateLimiter;
  publisher: Publisher;
  seriesPolicy: SeriesPolicy;
  topic: string;
  maxBodyBytes: number;
  rawRetentionMs: number;
  /** Seconds a client should wait after a 503 (the bus was unavailable). */
  retryAfterSeconds: number;
  nowMs: () => number;
  metrics: IngestMetrics;
  logger: Logger;
};

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

  function fail(res: ServerResponse, err: AppError, closeConnection = false): void {
    if (closeConnection) res.setHeader('Connection', 'close');
    const problem = sendProblem(res, err);
    deps.metrics.rejected(problem.status);
  }

  return async function handleIngest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = await admit(req, res);
    if (key === undefined) return;
    if (!isJson(req.headers['content-type'])) return fail(res, unsupportedMediaType(), true);

    const body = await readBody(req, deps.maxBodyBytes);
    if (!body.ok) {
      if (body.reason === 'too_large') return fail(res, payloadTooLarge(deps.maxBodyBytes), true);
      if (body.reason === 'bad_encoding') {
        return fail(
          res,
          new AppError(
            'unsupported_media_type',
            'Content-Encoding must be gzip or absent, and a gzip body must be valid.',
          ),
          true,
        );
      }
      return; // the client went away: nobody to answer
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

    try {
      await deps.publisher.publish(
        deps.topic,
        policed.kept.map((message) => ({
          key: sampleMessageKey(message),
          value: encodeSampleMessage(message),
        })),
      );
    } catch (err) {
      log.warn(
        { err, orgId: key.orgId, payloads: messages.length },
        'ingest not acknowledged by the bus',
      );
      return fail(res, dependencyUnavailable('The message bus', deps.retryAfterSeconds, err));
    }
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
