import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError, Logger } from '@monitor/platform';
import { rateLimited, sendProblem } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { readBody } from './read-body.js';
import { refuseAfterDrain } from './refuse-after-drain.js';
import type { SeriesRefusalReason } from './series-policy.js';
import { policeSeries } from './series-policy.js';
import { createWriteAdmission } from './write-admission.js';
import type { WriteDeps } from './write-steps.js';
import { bodyReadError, publishSamples } from './write-steps.js';

/** What a decoded body gives the pipeline: its host sample messages, or the answer refusing it. */
export type DecodedWrite =
  | {
      ok: true;
      messages: SampleMessage[];
      /** The success answer, once the bus acknowledged the kept messages. */
      answer(kept: readonly SampleMessage[]): {
        status: number;
        headers: Record<string, string | number>;
        body?: Uint8Array | string;
      };
    }
  /** `bodyLeft`: the body was not read to its end (the rest is dropped, the connection closed). */
  | { ok: false; error: AppError; bodyLeft?: boolean };

/** How one endpoint (/ingest, or an agent protocol) plugs into the write pipeline. */
export type WriteEndpoint = {
  logger: Logger;
  /** A 401 asks for Basic credentials too: collectd (libcurl) sends them only after one. */
  challenge: boolean;
  /** Before the body is read (its Content-Type, its query): the refusal, or the body's decoder. */
  select(req: IncomingMessage): AppError | BodyDecoder;
  /** Content-Encodings the decoder undoes itself (the body is read as received). */
  rawEncodings: readonly string[];
  /** The answer to a series the policy refuses for a reason other than the new-series limit. */
  seriesRefused(detail: string): AppError;
  /** Called with the status of every refusal the pipeline answers. */
  rejected(status: number): void;
};

type BodyDecoder = (body: Buffer, context: { orgId: string; receivedMs: number }) => DecodedWrite;

/**
 * One write request, whatever its protocol, in the contract's order: the key, its scope and the
 * rate limit before the body is read; the body within its limit after decompression; decoded by
 * the endpoint; the series policy; published, and answered only once the bus acknowledged every
 * message (a success answer means durable).
 */
export function createWritePipeline(
  endpoint: WriteEndpoint,
  deps: WriteDeps & {
    metrics: { seriesRefused(reason: SeriesRefusalReason, count: number): void };
  },
) {
  const admit = createWriteAdmission(
    {
      authenticator: deps.authenticator,
      rateLimiter: deps.rateLimiter,
      rejected: (status) => endpoint.rejected(status),
    },
    { challenge: endpoint.challenge },
  );
  const encodings = ['gzip', ...endpoint.rawEncodings];
  const readOptions = { rawEncodings: endpoint.rawEncodings };

  function fail(res: ServerResponse, err: AppError): void {
    endpoint.rejected(sendProblem(res, err).status);
  }

  /** A refusal before the body was read to its end: the rest is dropped, then the connection closed. */
  async function refuse(req: IncomingMessage, res: ServerResponse, err: AppError): Promise<void> {
    endpoint.rejected(await refuseAfterDrain(req, res, err));
  }

  return async function handleWrite(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = await admit(req, res);
    if (key === undefined) return;
    const decode = endpoint.select(req);
    if (typeof decode !== 'function') return refuse(req, res, decode);

    const body = await readBody(req, deps.maxBodyBytes, readOptions);
    if (!body.ok) {
      const err = bodyReadError(body, deps.maxBodyBytes, encodings);
      return err === undefined ? undefined : refuse(req, res, err);
    }

    const decoded = decode(body.body, { orgId: key.orgId, receivedMs: deps.nowMs() });
    if (!decoded.ok) {
      return decoded.bodyLeft === true ? refuse(req, res, decoded.error) : fail(res, decoded.error);
    }

    const policed = policeSeries(deps.seriesPolicy, deps, key.orgId, decoded.messages);
    if (policed.refusal !== undefined) {
      return fail(
        res,
        policed.refusal.reason === 'new_series_limit'
          ? rateLimited(policed.retryAfterSeconds, policed.refusal.detail)
          : endpoint.seriesRefused(policed.refusal.detail),
      );
    }
    const unpublished = await publishSamples(deps, endpoint.logger, key.orgId, policed.kept);
    if (unpublished !== undefined) return fail(res, unpublished);
    const answer = decoded.answer(policed.kept);
    const headers = { ...answer.headers };
    if (answer.body !== undefined) {
      headers['Content-Length'] =
        typeof answer.body === 'string' ? Buffer.byteLength(answer.body) : answer.body.byteLength;
    }
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  };
}
