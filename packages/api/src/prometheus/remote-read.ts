import type { Request, RequestHandler, Response } from 'express';
import type { SeriesSource, SourceSeries } from '@monitor/promql';
import { compareLabels, createLabelMatcher, PromqlError } from '@monitor/promql';
import type { ReadQuery, RemoteReadRequest } from '@monitor/protocols';
import {
  decodeRemoteReadRequest,
  encodeChunkedReadFrames,
  encodeRemoteReadSamples,
  ProtocolDecodeError,
  remoteReadContentTypes,
} from '@monitor/protocols';

/** The limits of one remote read request. */
type RemoteReadLimits = {
  /** Samples one request may return (Prometheus' `--storage.remote.read-sample-limit`). */
  maxSamples: number;
  /** Series one query may select. */
  maxSeries: number;
  /** Wall-clock budget of the whole request, ms. */
  timeoutMs: number;
};

export type RemoteReadDeps = {
  sourceFor(orgId: string): SeriesSource;
  limits: RemoteReadLimits;
};

/** Prometheus reads at most 32 MB of a compressed request (decodeReadLimit). */
const maxBodyBytes = 32 << 20;
const maxDecodedBytes = 64 << 20;

/** The raw body, refused past `maxBodyBytes` (snappy is no Content-Encoding express knows). */
async function readBody(req: Request): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > maxBodyBytes) {
      throw new PromqlError('bad_data', `the request body exceeds ${maxBodyBytes} bytes`);
    }
    parts.push(part);
  }
  return Buffer.concat(parts);
}

function decode(body: Buffer): RemoteReadRequest {
  try {
    return decodeRemoteReadRequest(body, maxDecodedBytes);
  } catch (err) {
    if (err instanceof ProtocolDecodeError) throw new PromqlError('bad_data', err.message);
    throw err;
  }
}

/** The query's series with samples in its range, in Prometheus' label order. */
async function select(
  source: SeriesSource,
  query: ReadQuery,
  maxSeries: number,
  signal: AbortSignal,
): Promise<SourceSeries[]> {
  const matchers = query.matchers.map((m) => createLabelMatcher(m.name, m.type, m.value));
  const found = await source.select(
    matchers,
    { startMs: query.startMs, endMs: query.endMs },
    {
      stepMs: query.hints?.stepMs ?? 0,
      rangeMs: query.hints?.rangeMs ?? 0,
      func: query.hints?.func === undefined || query.hints.func === '' ? null : query.hints.func,
      maxSeries,
    },
    signal,
  );
  if (found.length > maxSeries) {
    throw new PromqlError('bad_data', `more than ${maxSeries} series match a remote read query`);
  }
  // Like a TSDB querier: only series with samples in the range, sorted by their labels.
  return found
    .filter((s) => s.timestampsMs.length > 0 || (s.histograms?.timestampsMs.length ?? 0) > 0)
    .sort((a, b) => compareLabels(a.labels, b.labels));
}

async function write(res: Response, bytes: Buffer): Promise<void> {
  if (res.write(bytes)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      if (res.writableEnded || res.destroyed)
        reject(new PromqlError('canceled', 'client went away'));
      else resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Prometheus remote read (`POST /prometheus/api/v1/read`): a snappy prometheus.ReadRequest
 * answered with raw samples and native histograms (`SAMPLES`: one snappy ReadResponse) or, when
 * the client asks for it first, XOR chunks streamed in CRC-checked frames, one series at a time
 * (`STREAMED_XOR_CHUNKS`: floats only, as Prometheus' histogram chunk format is not written; a
 * one-query read that finds native histograms is answered with samples instead when the client
 * takes them). Each query reads its series' raw samples in [start, end] through
 * the same SeriesSource as PromQL, so the same organization scope and labels. Runs after the
 * router's authentication; the organization is `orgOf(res)`.
 */
export function createRemoteReadHandler(
  deps: RemoteReadDeps,
  orgOf: (res: Response) => string,
): RequestHandler {
  const { limits } = deps;
  return async (req, res) => {
    const request = decode(await readBody(req));
    const source = deps.sourceFor(orgOf(res));
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, limits.timeoutMs);
    const onClose = (): void => {
      if (!res.writableFinished) controller.abort();
    };
    res.on('close', onClose);
    try {
      // A one-query read (as Prometheus sends them) that found native histograms is answered
      // with samples where the client takes them: streamed chunks here are XOR chunks only.
      const single =
        request.responseType === 'streamed_xor_chunks' &&
        request.acceptsSamples &&
        request.queries.length === 1
          ? await select(source, request.queries[0]!, limits.maxSeries, controller.signal)
          : undefined;
      const withHistograms = single?.some((s) => (s.histograms?.timestampsMs.length ?? 0) > 0);
      if (request.responseType === 'samples' || withHistograms === true) {
        const results: SourceSeries[][] = [];
        let samples = 0;
        for (const query of request.queries) {
          const series =
            single ?? (await select(source, query, limits.maxSeries, controller.signal));
          for (const s of series) {
            samples += s.timestampsMs.length + (s.histograms?.timestampsMs.length ?? 0);
          }
          if (samples > limits.maxSamples) {
            throw new PromqlError('bad_data', `exceeded sample limit (${limits.maxSamples})`);
          }
          results.push(series);
        }
        res
          .status(200)
          .set('Content-Type', remoteReadContentTypes.samples)
          .set('Content-Encoding', 'snappy')
          .send(encodeRemoteReadSamples(results));
        return;
      }
      res.status(200).set('Content-Type', remoteReadContentTypes.streamed_xor_chunks);
      for (const [index, query] of request.queries.entries()) {
        const series = single ?? (await select(source, query, limits.maxSeries, controller.signal));
        for (const s of series) {
          for (const frame of encodeChunkedReadFrames(index, s)) await write(res, frame);
        }
      }
      res.end();
    } catch (err) {
      if (timedOut) {
        throw new PromqlError('timeout', 'remote read timed out', { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      res.off('close', onClose);
    }
  };
}
