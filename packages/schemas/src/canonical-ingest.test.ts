import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCanonicalIngestBody } from './canonical-ingest.js';
import { ingestLimits } from './ingest.js';
import { maxMetricMagnitude } from './input-policy.js';
import { parseIngestBodyWithZod } from './parse-ingest-body.js';
import { specExamplePayload } from './testing/spec-payload.js';

/**
 * The hand check against zod, the authority: when it returns payloads, zod accepts the body and
 * returns the same (deep and strictly equal: no key zod would not have); when zod refuses, it
 * returns nothing. Returns whether the hand check took the body.
 */
function agreesWithZod(body: unknown): boolean {
  const fast = readCanonicalIngestBody(body);
  const zod = parseIngestBodyWithZod(body);
  if (!zod.success) expect(fast).toBeUndefined();
  if (fast === undefined) return false;
  expect(zod.success).toBe(true);
  expect(fast).toStrictEqual(zod.success && zod.data);
  return true;
}

/** A body as the gateway hands it over: the value JSON.parse makes of the text. */
const parsed = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The text of a JSON object with one more own member (`__proto__` can only be made so). */
function withMember(value: object, key: string, member: unknown): unknown {
  const text = JSON.stringify(value);
  const inner = text === '{}' ? '' : `,${text.slice(1, -1)}`;
  return JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(member)}${inner}}`);
}

// Storable text: no NUL, no lone surrogate; a pair (the emoji) is fine, and so are escapes.
const storableChar = fc.constantFrom(
  'a',
  'Z',
  '0',
  '-',
  '_',
  ' ',
  'é',
  '😀',
  '"',
  '\\',
  '\n',
  '\u2028',
);
const storableText = (minLength: number, maxLength: number) =>
  fc
    .array(storableChar, { minLength, maxLength })
    .map((chars) => chars.join(''))
    .filter((text) => text.length >= minLength && text.length <= maxLength);

const metricName = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_.:-]{0,12}$/)
  .filter((name) => name !== '__proto__');
const metricValue = fc.oneof(
  fc.double({ min: -maxMetricMagnitude, max: maxMetricMagnitude, noNaN: true }),
  fc.constantFrom(0, -0, maxMetricMagnitude, -maxMetricMagnitude, 12.5),
);

const pad2 = (n: number) => String(n).padStart(2, '0');
const validTimestamp = fc.oneof(
  fc
    .date({
      min: new Date('1970-01-01T00:00:00Z'),
      max: new Date('2100-01-01T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((date) => date.toISOString()),
  fc
    .record({
      date: fc.date({
        min: new Date('2000-01-01'),
        max: new Date('2099-12-31'),
        noInvalidDate: true,
      }),
      sign: fc.constantFrom('+', '-'),
      hours: fc.integer({ min: 0, max: 23 }),
      minutes: fc.integer({ min: 0, max: 59 }),
      fraction: fc.constantFrom('', '.5', '.123456789'),
    })
    .map(
      ({ date, sign, hours, minutes, fraction }) =>
        `${date.toISOString().slice(0, 19)}${fraction}${sign}${pad2(hours)}:${pad2(minutes)}`,
    ),
);

const percent = fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant(0));
const count = fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER));

const container = fc.record(
  {
    name: storableText(1, 20),
    image: storableText(0, 20),
    status: storableText(0, 10),
    cpu_percent: percent,
    memory_usage: count,
  },
  { requiredKeys: ['name'] },
);
const processEntry = fc.record(
  { name: storableText(1, 20), pid: count, cpu_percent: percent, memory_rss: count },
  { requiredKeys: ['name', 'pid'] },
);

type Payload = Record<string, unknown> & {
  host: string;
  metrics: Record<string, number>;
  tags?: Record<string, string>;
};

const validPayload: fc.Arbitrary<Payload> = fc.record(
  {
    host: storableText(1, ingestLimits.maxHostLength),
    timestamp: validTimestamp,
    metrics: fc.dictionary(metricName, metricValue, { minKeys: 1, maxKeys: 8 }),
    tags: fc.dictionary(storableText(1, 12), storableText(0, 20), { maxKeys: 6 }),
    docker_containers: fc.array(container, { maxLength: 3 }),
    processes: fc.array(processEntry, { maxLength: 3 }),
  },
  { requiredKeys: ['host', 'metrics'] },
);

const entries = <T>(count: number, entry: (index: number) => T): Record<string, T> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`m${i}`, entry(i)]));

const justAbove = (limit: number) => limit * (1 + Number.EPSILON);

/** Targeted changes of a valid payload: each limit on both sides, and what the policy refuses. */
const mutations: readonly [string, (payload: Payload) => unknown][] = [
  ['no host', ({ host: _host, ...rest }) => rest],
  ...[0, 1, 255, 256].map((length): [string, (payload: Payload) => unknown] => [
    `a host of ${length}`,
    (payload) => ({ ...payload, host: 'h'.repeat(length) }),
  ]),
  ...['a\u0000b', 'a\ud800', '\udc00a', '😀', 'a\ud83d\ude00b', 42, null, ['h']].map(
    (host): [string, (payload: Payload) => unknown] => [
      `host ${JSON.stringify(host)}`,
      (payload) => ({ ...payload, host }),
    ],
  ),
  ...[
    '2026-11-24T10:00:00Z',
    '2026-11-24T10:00:00.123456Z',
    '2026-11-24T10:00:00+23:59',
    '2026-11-24T10:00:00-00:00',
    '2026-11-24T10:00:00+24:00',
    '2026-11-24T10:00:00+0200',
    '2026-11-24T10:00Z',
    '2026-11-24T10:00:00',
    '2026-11-24',
    '2026-02-29T10:00:00Z',
    '2028-02-29T10:00:00Z',
    '2026-11-24t10:00:00z',
    '2026-11-24T24:00:00Z',
    ' 2026-11-24T10:00:00Z',
    '',
    1_795_341_600_000,
    null,
  ].map((timestamp): [string, (payload: Payload) => unknown] => [
    `timestamp ${JSON.stringify(timestamp)}`,
    (payload) => ({ ...payload, timestamp }),
  ]),
  ...[0, 1, ingestLimits.maxMetricsPerPayload, ingestLimits.maxMetricsPerPayload + 1].map(
    (size): [string, (payload: Payload) => unknown] => [
      `${size} metrics`,
      (payload) => ({ ...payload, metrics: entries(size, (i) => i) }),
    ],
  ),
  ...[
    '1abc',
    'a b',
    'é',
    '',
    '__proto__',
    'constructor',
    'a'.repeat(128),
    'a'.repeat(129),
    'a\u0000',
    'toString',
    '123',
  ].map((name): [string, (payload: Payload) => unknown] => [
    `metric name ${JSON.stringify(name)}`,
    (payload) => ({ ...payload, metrics: withMember(payload.metrics, name, 1) }),
  ]),
  ...[
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    maxMetricMagnitude,
    -maxMetricMagnitude,
    justAbove(maxMetricMagnitude),
    -justAbove(maxMetricMagnitude),
    Number.MAX_VALUE,
    -0,
    '1',
    null,
    true,
    [1],
    { value: 1 },
  ].map((value): [string, (payload: Payload) => unknown] => [
    `metric value ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`,
    (payload) => ({ ...payload, metrics: { ...payload.metrics, m: value } }),
  ]),
  ['metrics null', (payload) => ({ ...payload, metrics: null })],
  ['metrics an array', (payload) => ({ ...payload, metrics: [1] })],
  ['no metrics', ({ metrics: _metrics, ...rest }) => rest],
  ...[0, ingestLimits.maxTags, ingestLimits.maxTags + 1].map(
    (size): [string, (payload: Payload) => unknown] => [
      `${size} tags`,
      (payload) => ({ ...payload, tags: entries(size, (i) => `v${i}`) }),
    ],
  ),
  ...[
    '',
    'k'.repeat(64),
    'k'.repeat(65),
    'k\u0000',
    'k\ud800',
    '__proto__',
    'constructor',
    '7',
  ].map((key): [string, (payload: Payload) => unknown] => [
    `tag key ${JSON.stringify(key)}`,
    (payload) => ({ ...payload, tags: withMember(payload.tags ?? {}, key, 'v') }),
  ]),
  ...['', 'v'.repeat(256), 'v'.repeat(257), 'v\u0000', '\udbff', 1, null, true].map(
    (value): [string, (payload: Payload) => unknown] => [
      `tag value ${JSON.stringify(value)}`,
      (payload) => ({ ...payload, tags: { ...payload.tags, k: value } }),
    ],
  ),
  ['tags null', (payload) => ({ ...payload, tags: null })],
  ['tags an array', (payload) => ({ ...payload, tags: ['a'] })],
  ...[ingestLimits.maxContainers, ingestLimits.maxContainers + 1].map(
    (size): [string, (payload: Payload) => unknown] => [
      `${size} containers`,
      (payload) => ({
        ...payload,
        docker_containers: Array.from({ length: size }, () => ({ name: 'c' })),
      }),
    ],
  ),
  ...[ingestLimits.maxProcesses, ingestLimits.maxProcesses + 1].map(
    (size): [string, (payload: Payload) => unknown] => [
      `${size} processes`,
      (payload) => ({
        ...payload,
        processes: Array.from({ length: size }, () => ({ name: 'p', pid: 1 })),
      }),
    ],
  ),
  ...[
    {},
    { name: '' },
    { name: 'n'.repeat(255) },
    { name: 'n'.repeat(256) },
    { name: 'c\u0000' },
    { name: 'c', image: 'i'.repeat(1024) },
    { name: 'c', image: 'i'.repeat(1025) },
    { name: 'c', image: 'i\ud800' },
    { name: 'c', status: 's'.repeat(64) },
    { name: 'c', status: 's'.repeat(65) },
    { name: 'c', cpu_percent: -1 },
    { name: 'c', cpu_percent: -0 },
    { name: 'c', cpu_percent: Number.POSITIVE_INFINITY },
    { name: 'c', cpu_percent: '1' },
    { name: 'c', memory_usage: 1.5 },
    { name: 'c', memory_usage: 2 ** 53 },
    { name: 'c', memory_usage: -1 },
    { name: 'c', memory_usage: null },
    { name: 'c', id: 'abc' },
    null,
    'c',
  ].map((entry): [string, (payload: Payload) => unknown] => [
    `container ${JSON.stringify(entry)}`,
    (payload) => ({ ...payload, docker_containers: [{ name: 'ok' }, entry] }),
  ]),
  ...[
    { name: 'p' },
    { pid: 1 },
    { name: 'p', pid: -1 },
    { name: 'p', pid: 1.5 },
    { name: 'p', pid: Number.MAX_SAFE_INTEGER + 1 },
    { name: 'p', pid: 1, cpu_percent: -0.1 },
    { name: 'p', pid: 1, memory_rss: 2 ** 60 },
    { name: 'p\ud800', pid: 1 },
    { name: 'p', pid: 1, cmdline: 'x' },
  ].map((entry): [string, (payload: Payload) => unknown] => [
    `process ${JSON.stringify(entry)}`,
    (payload) => ({ ...payload, processes: [entry] }),
  ]),
  ['containers an object', (payload) => ({ ...payload, docker_containers: { name: 'c' } })],
  ['processes null', (payload) => ({ ...payload, processes: null })],
  ['an unknown key', (payload) => ({ ...payload, agent_version: '9.9' })],
  ['an own __proto__', (payload) => withMember(payload, '__proto__', { host: 'x' })],
  ['an own constructor', (payload) => withMember(payload, 'constructor', 1)],
  ['a null payload', () => null],
  ['a string payload', (payload) => JSON.stringify(payload)],
  ['a payload in an array in an array', (payload) => [[payload]]],
];

const mutation = fc.constantFrom(...mutations);

describe('readCanonicalIngestBody', () => {
  it('returns what zod returns for any valid payload, and takes every one of them', () => {
    fc.assert(
      fc.property(validPayload, (payload) => {
        // fast-check's objects may lack a prototype, which JSON.parse's never do: those defer.
        agreesWithZod(payload);
        expect(agreesWithZod(parsed(payload))).toBe(true);
      }),
    );
  });

  it('takes batches from 1 to 1000 payloads and defers empty or longer ones to zod', () => {
    fc.assert(
      fc.property(fc.array(validPayload, { minLength: 1, maxLength: 5 }), (payloads) => {
        expect(agreesWithZod(parsed(payloads))).toBe(true);
      }),
    );
    const payload = { host: 'h', metrics: { m: 1 } };
    expect(agreesWithZod([])).toBe(false);
    expect(
      agreesWithZod(Array.from({ length: ingestLimits.maxPayloadsPerRequest }, () => payload)),
    ).toBe(true);
    expect(
      agreesWithZod(Array.from({ length: ingestLimits.maxPayloadsPerRequest + 1 }, () => payload)),
    ).toBe(false);
  });

  it('never returns what zod refuses, nor anything zod would not return, for a changed payload', () => {
    fc.assert(
      fc.property(validPayload, mutation, (payload, [, change]) => {
        agreesWithZod(change(payload));
        agreesWithZod(parsed(change(payload)));
      }),
      { numRuns: 500 },
    );
  });

  it('holds to zod for every change in a batch, wherever the changed payload is', () => {
    fc.assert(
      fc.property(
        fc.array(validPayload, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        mutation,
        (payloads, at, [, change]) => {
          const index = at % payloads.length;
          const batch = payloads.map((payload, i) => (i === index ? change(payload) : payload));
          agreesWithZod(batch);
          agreesWithZod(parsed(batch));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds to zod for arbitrary JSON values, and for payload-shaped ones with arbitrary fields', () => {
    const anyField = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        agreesWithZod(value);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            host: fc.oneof(anyField, storableText(1, 5)),
            timestamp: fc.oneof(anyField, validTimestamp),
            metrics: fc.oneof(anyField, fc.dictionary(fc.string(), anyField, { maxKeys: 3 })),
            tags: fc.oneof(anyField, fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 })),
            docker_containers: fc.oneof(anyField, fc.array(fc.dictionary(fc.string(), anyField))),
            processes: fc.oneof(anyField, fc.array(fc.dictionary(fc.string(), anyField))),
          },
          { requiredKeys: [] },
        ),
        (value) => {
          agreesWithZod(value);
          agreesWithZod([value]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('takes the spec’s payload and the shape bench:compare sends', () => {
    const spec = specExamplePayload;
    const compare = JSON.parse(
      '{"host":"h00042","timestamp":"2026-11-24T10:26:00.123Z",' +
        '"metrics":{"cpu":12.3,"mem":45.6,"disk":78.9},' +
        '"tags":{"region":"eu-west-1","env":"production","role":"api"}}',
    ) as unknown;
    expect(readCanonicalIngestBody(spec)).toEqual([spec]);
    expect(readCanonicalIngestBody(compare)).toEqual([compare]);
    expect(readCanonicalIngestBody(Array.from({ length: 100 }, () => compare))).toHaveLength(100);
  });
});
