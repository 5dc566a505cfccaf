import { monotonicFactory } from 'ulid';
import { z } from 'zod';

/** Type prefixes (docs/api.md#identifiers): `ntf` for notification outbox entries, `sil` for silences. */
export const idPrefixes = ['svc', 'rul', 'alr', 'inv', 'org', 'key', 'ntf', 'sil'] as const;

export type IdPrefix = (typeof idPrefixes)[number];

/** `svc_01HZX…`: the prefix, an underscore, and a 26-character ULID (uppercase Crockford base32). */
export type Id<P extends IdPrefix = IdPrefix> = `${P}_${string}`;

/** A ULID: 48-bit millisecond time then 80 random bits, so the first character is 0..7. */
const ulidPattern = '[0-7][0-9A-HJKMNP-TV-Z]{25}';

const patterns = new Map<string, RegExp>(
  idPrefixes.map((prefix) => [prefix, new RegExp(`^${prefix}_${ulidPattern}$`)]),
);

function patternOf(prefix: IdPrefix): RegExp {
  const pattern = patterns.get(prefix);
  if (pattern === undefined) throw new Error(`unknown id prefix ${String(prefix)}`);
  return pattern;
}

export interface IdGenerator {
  /** A new id; sorts after every id this generator made before, even within one millisecond. */
  newId<P extends IdPrefix>(prefix: P): Id<P>;
}

/**
 * A generator over one monotonic ULID factory: ids sort by creation time, and ids made in the
 * same millisecond (or after the clock stepped back) still sort in creation order.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  const nextUlid = monotonicFactory();
  return {
    newId<P extends IdPrefix>(prefix: P): Id<P> {
      patternOf(prefix);
      return `${prefix}_${nextUlid(now())}`;
    },
  };
}

const processIds = createIdGenerator();

/** A new id from the process-wide generator: `newId('rul')` → `rul_01HZX…`. */
export function newId<P extends IdPrefix>(prefix: P): Id<P> {
  return processIds.newId(prefix);
}

/** Whether `value` is a well-formed id with this prefix (the ULID part uppercase, as generated). */
export function isId<P extends IdPrefix>(prefix: P, value: unknown): value is Id<P> {
  return typeof value === 'string' && patternOf(prefix).test(value);
}

/**
 * A zod schema for an id of this prefix, e.g. a path parameter: `idSchema('rul')`. It is a plain
 * string-with-pattern at runtime, so JSON Schema / OpenAPI generation shows the pattern; only the
 * static type is narrowed to `Id<P>` (which every string passing the pattern is).
 */
export function idSchema<P extends IdPrefix>(prefix: P): z.ZodType<Id<P>, string> {
  return z
    .string()
    .regex(patternOf(prefix), { error: `must be an id of the form ${prefix}_<ULID>` }) as z.ZodType<
    Id<P>,
    string
  >;
}
