import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Publisher } from '@monitor/bus';
import type { Logger } from '@monitor/platform';
import { AppError, dependencyUnavailable, payloadTooLarge } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { sampleMessageKey } from '@monitor/schemas';
import type { ReadBodyResult } from './read-body.js';
import type { SeriesPolicy } from './series-policy.js';
import type { IngestRateLimiter } from './write-admission.js';

/** What every write handler (/ingest and the agent protocols) is built from, besides its metrics. */
export type WriteDeps = {
  authenticator: ApiKeyAuthenticator;
  rateLimiter: IngestRateLimiter;
  publisher: Publisher;
  seriesPolicy: SeriesPolicy;
  topic: string;
  /** A host sample message's bytes on the bus (binary, or JSON while older consumers run). */
  encodeMessage: (message: SampleMessage) => Buffer;
  /** After decompression. */
  maxBodyBytes: number;
  rawRetentionMs: number;
  /** The most buckets one native histogram may have (INGEST_HISTOGRAM_MAX_BUCKETS). */
  maxHistogramBuckets: number;
  /** Seconds a client should wait after a 503 (the bus was unavailable). */
  retryAfterSeconds: number;
  nowMs: () => number;
  logger: Logger;
};

/**
 * The answer to a body that could not be read, or undefined when the client went away (nobody
 * to answer). `encodings`: the Content-Encodings the endpoint takes besides none.
 */
export function bodyReadError(
  failure: Extract<ReadBodyResult, { ok: false }>,
  maxBodyBytes: number,
  encodings: readonly string[],
): AppError | undefined {
  switch (failure.reason) {
    case 'too_large':
      return payloadTooLarge(maxBodyBytes);
    case 'bad_encoding':
      return new AppError(
        'unsupported_media_type',
        `Content-Encoding must be ${encodings.join(' or ')} or absent, and the body must decode.`,
      );
    case 'aborted':
      return undefined;
  }
}

/**
 * Publishes the messages of one write; resolves with the 503 to answer when the bus did not
 * take them (logged here), undefined once it acknowledged every one.
 */
export async function publishSamples(
  deps: Pick<WriteDeps, 'publisher' | 'topic' | 'encodeMessage' | 'retryAfterSeconds'>,
  log: Logger,
  orgId: string,
  messages: readonly SampleMessage[],
): Promise<AppError | undefined> {
  if (messages.length === 0) return undefined;
  try {
    await deps.publisher.publish(
      deps.topic,
      messages.map((message) => ({
        key: sampleMessageKey(message),
        value: deps.encodeMessage(message),
      })),
    );
    return undefined;
  } catch (err) {
    log.warn({ err, orgId, samples: messages.length }, 'write not acknowledged by the bus');
    return dependencyUnavailable('The message bus', deps.retryAfterSeconds, err);
  }
}
