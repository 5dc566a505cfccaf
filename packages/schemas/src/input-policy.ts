import { z } from 'zod';

/**
 * The input policy of the edge: what any string or metric value of an HTTP body or query
 * parameter must satisfy before it may reach storage. Every request schema builds its free-text
 * strings, its string-keyed maps and its metric values with the helpers below, so the gateway's
 * ingest validation and the REST API refuse the same inputs with the same messages (422, at the
 * exact path), before anything is stored or acknowledged.
 */

/**
 * Metric values are refused beyond ±1e100.
 *
 * Why this bound: the aggregates must never overflow double precision (±1.8e308), or a rollup or
 * a metrics read fails for everyone whose data shares the statement.
 * - Sums: `(service, metric, time)` is unique and time has millisecond precision, so a 1-minute
 *   bucket holds at most 60 000 samples and a 1-hour bucket 3.6 million; their sums stay below
 *   3.6e106.
 * - PostgreSQL's `avg(float8)` (the TimescaleDB continuous aggregate uses it) also accumulates
 *   squared deviations scaled by the count, about (2 · count · |value|)²: below 1.5e210 for a
 *   minute's 60 000 samples. With ±1e300, as first proposed, two samples 1e200 apart already
 *   overflow it; ±1e150 would leave no margin. Squares and products of two values (variance,
 *   correlation in investigations) stay finite too.
 * - No measurement comes near it (the observable universe has about 1e80 atoms).
 */
export const maxMetricMagnitude = 1e100;

const metricValueMessage = 'must be a finite number from -1e100 to 1e100';

/** A metric value: finite, at most `maxMetricMagnitude` in magnitude. */
export function metricValueSchema() {
  return z
    .number({ error: metricValueMessage })
    .min(-maxMetricMagnitude, { error: metricValueMessage })
    .max(maxMetricMagnitude, { error: metricValueMessage });
}

/**
 * One character of text PostgreSQL can store and index: anything but NUL (U+0000: `text` refuses
 * the byte, `jsonb` the `\u0000` escape) and an unpaired UTF-16 surrogate (it has no UTF-8 form:
 * the driver would store U+FFFD instead, or the write fails downstream). A surrogate pair (an
 * emoji) is one character: without the `u` flag (the OpenAPI generator drops flags) JavaScript
 * reads UTF-16 units, and the second branch takes a pair.
 */
const storableCharacter = '(?:[^\\u0000\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])';

/** Text made only of `storableCharacter`s: what the schemas check. */
const storableTextPattern = new RegExp(`^${storableCharacter}*$`);

/**
 * What the OpenAPI document states of it: no NUL. Lone surrogates cannot be written in a pattern
 * that JSON Schema tools outside JavaScript accept (Rust's and Go's regex engines refuse
 * surrogate code points, and JSON text with one is not interoperable, RFC 8259 §8.2), so the
 * document says so in words (its description of inputs) rather than in the pattern.
 */
const storableTextDocumentPattern = '^[^\\u0000]*$';

export const storableTextMessage = 'must not contain NUL (U+0000) or an unpaired UTF-16 surrogate';

/** Whether `text` passes the policy (for code that checks strings outside a zod schema). */
export function isStorableText(text: string): boolean {
  return storableTextPattern.test(text);
}

/** `schema` with the storable-text check added (it keeps its own bounds and messages). */
export function storableText(): z.ZodString;
export function storableText<S extends z.ZodString | z.ZodURL>(schema: S): S;
export function storableText(schema: z.ZodString | z.ZodURL = z.string()) {
  return schema
    .regex(storableTextPattern, { error: storableTextMessage })
    .meta({ pattern: storableTextDocumentPattern });
}

/**
 * A record key no map may use: zod, like a plain `{}`, drops an own `__proto__` key (assigning
 * it would replace the prototype), so it would vanish without an error. It is refused instead.
 */
const reservedKey = '__proto__';

const reservedKeyMessage = '`__proto__` is a reserved name';

/** JSON Schema for the keys of a map: `pattern` refuses NUL, lone surrogates and `__proto__`. */
export function keyNamesDocument(options: { minLength?: number; maxLength: number }) {
  return {
    type: 'string',
    ...(options.minLength === undefined ? {} : { minLength: options.minLength }),
    maxLength: options.maxLength,
    pattern: `^(?!${reservedKey}$)[^\\u0000]*$`,
  } as const;
}

/**
 * A JSON object of `key` → `value` whose keys are checked like any other input: the policy's
 * text check, `__proto__` refused (at its own path), and a key error reported at the key's path
 * with the key schema's own message (`tags["a\u0000"]: key must not contain NUL …`).
 */
export function storableRecord<V extends z.ZodType>(
  key: z.ZodString,
  value: V,
  options: { typeMessage?: string } = {},
) {
  const record = z.record(storableText(key), value, {
    error: (issue) => {
      if (issue.code === 'invalid_key') {
        const inner = (issue as { issues?: readonly { message?: string }[] }).issues?.[0];
        return `keys ${inner?.message ?? 'must be valid'}`;
      }
      if (issue.code === 'invalid_type') return options.typeMessage ?? 'must be a JSON object';
      return undefined;
    },
  });
  return z.preprocess((input, ctx) => {
    if (typeof input === 'object' && input !== null && Object.hasOwn(input, reservedKey)) {
      ctx.addIssue({ code: 'custom', message: reservedKeyMessage, path: [reservedKey], input });
    }
    return input;
  }, record);
}
