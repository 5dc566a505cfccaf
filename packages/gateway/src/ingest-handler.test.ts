import { encodeSampleMessage } from '@monitor/schemas';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { BusMessage, Publisher } from '@monitor/bus';
import { createLogger } from '@monitor/platform';
import { createIngestHandler } from './ingest-handler.js';
import { createSeriesPolicy } from './series-policy.js';

const unlimitedSeries = {
  maxLabels: 64,
  maxLabelNameLength: 64,
  maxLabelValueLength: 256,
  maxNewSeriesPerMinute: 0,
  maxTrackedSeries: 10,
};

const nowMs = Date.parse('2026-11-22T10:00:00Z');

/** A request as node:http hands it over: the body stream with method and headers. */
function request(body: string): IncomingMessage {
  const stream = Readable.from([Buffer.from(body)]) as unknown as IncomingMessage;
  stream.method = 'POST';
  stream.url = '/api/v1/ingest';
  stream.headers = { 'content-type': 'application/json', 'x-api-key': 'key' };
  return stream;
}

type Answer = { status: number; body: unknown };

/** The parts of ServerResponse the handler and sendProblem use, recording the answer. */
function response(): { res: ServerResponse; answer: () => Answer } {
  const headers = new Map<string, unknown>();
  let text = '';
  const fake = {
    statusCode: 200,
    headersSent: false,
    setHeader(name: string, value: unknown) {
      headers.set(name.toLowerCase(), value);
      return fake;
    },
    writeHead(status: number) {
      fake.statusCode = status;
      return fake;
    },
    end(chunk?: string) {
      text += chunk ?? '';
      fake.headersSent = true;
      return fake;
    },
    destroy() {
      return fake;
    },
  };
  return {
    res: fake as unknown as ServerResponse,
    answer: () => ({ status: fake.statusCode, body: text === '' ? undefined : JSON.parse(text) }),
  };
}

function handler() {
  const published: BusMessage[] = [];
  const publisher: Publisher = {
    publish: (_topic, messages) => {
      published.push(...messages);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  const handle = createIngestHandler({
    authenticator: {
      authenticate: () => Promise.resolve({ keyId: 'key_1', orgId: 'org_1', scopes: ['ingest'] }),
    },
    rateLimiter: () => Promise.resolve('allowed'),
    publisher,
    topic: 'samples',
    encodeMessage: encodeSampleMessage,
    maxBodyBytes: 1024 * 1024,
    rawRetentionMs: 30 * 86_400_000,
    maxHistogramBuckets: 160,
    retryAfterSeconds: 2,
    nowMs: () => nowMs,
    metrics: {
      accepted: () => undefined,
      rejected: () => undefined,
      seriesRefused: () => undefined,
    },
    seriesPolicy: createSeriesPolicy(unlimitedSeries, () => nowMs),
    logger: createLogger({ level: 'silent' }),
  });
  return {
    published,
    async post(body: string): Promise<Answer> {
      const { res, answer } = response();
      await handle(request(body), res);
      return answer();
    },
  };
}

const errorsOf = (answer: Answer) =>
  (answer.body as { errors?: { path: string }[] }).errors?.map((error) => error.path);

describe('createIngestHandler', () => {
  it('accepts a valid batch and publishes one message per payload', async () => {
    const gateway = handler();
    const answer = await gateway.post(
      JSON.stringify([
        { host: 'a', metrics: { m: 1 } },
        { host: 'b', metrics: { m: 2, n: 3 } },
      ]),
    );
    expect(answer).toEqual({ status: 200, body: { status: 'ok', events_accepted: 3 } });
    expect(gateway.published).toHaveLength(2);
  });

  it.each([
    ['a NUL in the host', '{"host":"x\\u0000y","metrics":{"m":1}}', ['host']],
    [
      'a NUL in a tag value, in a batch',
      '[{"host":"a","metrics":{"m":1}},{"host":"b","metrics":{"m":1},"tags":{"env":"\\u0000"}}]',
      ['[1].tags.env'],
    ],
    [
      'a lone surrogate in a tag key',
      '[{"host":"a","metrics":{"m":1},"tags":{"\\ud800":"x"}}]',
      // formatIssuePath writes an odd key as a JSON string: the surrogate is escaped.
      ['[0].tags["\\ud800"]'],
    ],
    [
      'a NUL in the fourth process name',
      JSON.stringify({
        host: 'a',
        metrics: { m: 1 },
        processes: ['a', 'b', 'c', 'd\u0000'].map((name, pid) => ({ name, pid })),
      }),
      ['processes[3].name'],
    ],
    ['a value beyond 1e100', '{"host":"a","metrics":{"m":1.7976931348623157e308}}', ['metrics.m']],
    [
      'a metric named __proto__',
      '{"host":"a","metrics":{"__proto__":1,"m":2}}',
      ['metrics.__proto__'],
    ],
  ])('refuses %s with a 422 at its path and publishes nothing', async (_what, body, paths) => {
    const gateway = handler();
    const answer = await gateway.post(body);
    expect(answer.status).toBe(422);
    expect(errorsOf(answer)).toEqual(paths);
    expect(gateway.published).toEqual([]);
  });

  it('stores a metric named constructor like any other', async () => {
    const gateway = handler();
    const answer = await gateway.post('{"host":"a","metrics":{"constructor":1,"m":2}}');
    expect(answer).toEqual({ status: 200, body: { status: 'ok', events_accepted: 2 } });
    const message = JSON.parse(gateway.published[0]!.value.toString()) as { metrics: object };
    expect(message.metrics).toEqual({ constructor: 1, m: 2 });
  });
});
