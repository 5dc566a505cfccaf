import { LineProtocolSyntaxError } from './protocol-decode-error.js';

export type LineProtocolFieldValue =
  | { type: 'float' | 'integer' | 'unsigned'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'string'; value: string };

/** One point of line protocol, unescaped. */
export type LineProtocolPoint = {
  /** 1-based line number in the body. */
  line: number;
  measurement: string;
  /** In the order written; keys are unique. */
  tags: [key: string, value: string][];
  /** In the order written; a key may repeat (the mapping keeps the first). */
  fields: [key: string, value: LineProtocolFieldValue][];
  /** The timestamp as written (an int64 in decimal), undefined when absent. */
  timestamp: string | undefined;
};

const backslash = 0x5c;
const comma = 0x2c;
const space = 0x20;
const equals = 0x3d;
const quote = 0x22;
const tab = 0x09;

const int64Max = 9223372036854775807n;
const int64Min = -9223372036854775808n;
const uint64Max = 18446744073709551615n;

const floatPattern = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const integerPattern = /^-?\d+$/;
const unsignedPattern = /^\d+$/;
const booleans: Record<string, boolean> = {
  t: true,
  T: true,
  true: true,
  True: true,
  TRUE: true,
  f: false,
  F: false,
  false: false,
  False: false,
  FALSE: false,
};

/** Whether decimal `digits` (as `integerPattern` admits) lie in [min, max]. */
function inRange(digits: string, min: bigint, max: bigint): boolean {
  // Up to 18 digits always fit an int64; only longer ones need the exact comparison.
  if (digits.replace(/^-?0*/, '').length <= 18) return true;
  const value = BigInt(digits);
  return value >= min && value <= max;
}

/** A piece of the input for an error message: quoted, and cut short if long. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

function isMeasurementStop(c: number): boolean {
  return c === comma || c === space;
}

function isKeyStop(c: number): boolean {
  return c === comma || c === space || c === equals;
}

/**
 * Parses InfluxDB line protocol (the same text for the v1 and v2 write APIs):
 * `measurement[,tag=value…] field=value[,field=value…] [timestamp]`, one point per line.
 *
 * Escaping, as InfluxDB documents it: in a measurement, a backslash escapes a comma or a space;
 * in tag keys, tag values and field keys, a comma, an equals sign or a space; in a string field
 * value (in double quotes), a double quote or a backslash. A backslash before any other
 * character is itself (so a name cannot end in a backslash). Field values: floats (`1`, `-1.5`,
 * `1e3`), integers (`1i`, int64), unsigned (`1u`, uint64), booleans (t, T, true, True, TRUE and
 * f, F, false, False, FALSE), strings. Empty lines and lines starting with `#` are skipped; a
 * trailing `\r` (CRLF bodies) is ignored; newlines cannot occur inside a value.
 *
 * Throws `LineProtocolSyntaxError` naming the first line that does not parse, and nothing else.
 */
export function parseLineProtocol(text: string): LineProtocolPoint[] {
  const points: LineProtocolPoint[] = [];
  let start = 0;
  let lineNumber = 0;
  while (start <= text.length) {
    lineNumber += 1;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const next = end + 1;
    if (end > start && text.charCodeAt(end - 1) === 0x0d) end -= 1;
    const point = parseLine(text, start, end, lineNumber);
    if (point !== undefined) points.push(point);
    start = next;
  }
  return points;
}

function parseLine(
  text: string,
  lineStart: number,
  end: number,
  line: number,
): LineProtocolPoint | undefined {
  let pos = lineStart;
  const fail = (problem: string): never => {
    throw new LineProtocolSyntaxError(line, problem);
  };

  /** Reads up to an unescaped stop character, dropping the backslash of each escape. */
  const read = (isStop: (c: number) => boolean): string => {
    let out = '';
    let segment = pos;
    while (pos < end) {
      const c = text.charCodeAt(pos);
      if (c === backslash && pos + 1 < end) {
        const escaped = text.charCodeAt(pos + 1);
        if (isStop(escaped)) {
          out += text.slice(segment, pos);
          segment = pos + 1;
          pos += 2;
          continue;
        }
      }
      if (isStop(c)) break;
      pos += 1;
    }
    return out + text.slice(segment, pos);
  };

  const skipSpaces = (): void => {
    while (pos < end && text.charCodeAt(pos) === space) pos += 1;
  };

  while (pos < end && (text.charCodeAt(pos) === space || text.charCodeAt(pos) === tab)) pos += 1;
  if (pos === end || text.charCodeAt(pos) === 0x23 /* # */) return undefined;

  const measurement = read(isMeasurementStop);
  if (measurement === '') fail('missing measurement');

  const tags: [string, string][] = [];
  while (pos < end && text.charCodeAt(pos) === comma) {
    pos += 1;
    const key = read(isKeyStop);
    if (key === '') fail('missing tag key');
    if (pos >= end || text.charCodeAt(pos) !== equals) fail(`missing value of tag ${quoted(key)}`);
    pos += 1;
    const value = read(isKeyStop);
    if (value === '') fail(`missing value of tag ${quoted(key)}`);
    if (pos < end && text.charCodeAt(pos) === equals) fail(`unescaped "=" in tag ${quoted(key)}`);
    if (tags.some(([other]) => other === key)) fail(`duplicate tag ${quoted(key)}`);
    tags.push([key, value]);
  }
  if (pos >= end) fail('missing fields');
  skipSpaces();
  if (pos >= end) fail('missing fields');

  const fields: [string, LineProtocolFieldValue][] = [];
  for (;;) {
    const key = read(isKeyStop);
    if (key === '') fail('missing field key');
    if (pos >= end || text.charCodeAt(pos) !== equals)
      fail(`missing value of field ${quoted(key)}`);
    pos += 1;
    fields.push([key, readFieldValue(key)]);
    if (pos < end && text.charCodeAt(pos) === comma) {
      pos += 1;
      continue;
    }
    break;
  }

  let timestamp: string | undefined;
  skipSpaces();
  if (pos < end) {
    const tokenStart = pos;
    while (pos < end && text.charCodeAt(pos) !== space) pos += 1;
    timestamp = text.slice(tokenStart, pos);
    if (!integerPattern.test(timestamp) || !inRange(timestamp, int64Min, int64Max)) {
      fail(`invalid timestamp ${quoted(timestamp)}: expected an int64`);
    }
    skipSpaces();
    if (pos < end) fail('unexpected text after the timestamp');
  }
  return { line, measurement, tags, fields, timestamp };

  function readFieldValue(key: string): LineProtocolFieldValue {
    if (pos < end && text.charCodeAt(pos) === quote) {
      pos += 1;
      let out = '';
      let segment = pos;
      for (;;) {
        if (pos >= end) return fail(`unterminated string in field ${quoted(key)}`);
        const c = text.charCodeAt(pos);
        if (c === quote) break;
        if (c === backslash && pos + 1 < end) {
          const escaped = text.charCodeAt(pos + 1);
          if (escaped === quote || escaped === backslash) {
            out += text.slice(segment, pos);
            segment = pos + 1;
            pos += 2;
            continue;
          }
        }
        pos += 1;
      }
      out += text.slice(segment, pos);
      pos += 1;
      if (pos < end && text.charCodeAt(pos) !== comma && text.charCodeAt(pos) !== space) {
        fail(`unexpected text after the string in field ${quoted(key)}`);
      }
      return { type: 'string', value: out };
    }
    const tokenStart = pos;
    while (pos < end && text.charCodeAt(pos) !== comma && text.charCodeAt(pos) !== space) pos += 1;
    const token = text.slice(tokenStart, pos);
    const boolean = Object.hasOwn(booleans, token) ? booleans[token] : undefined;
    if (boolean !== undefined) return { type: 'boolean', value: boolean };
    const last = token.charCodeAt(token.length - 1);
    const digits = token.slice(0, -1);
    if (last === 0x69 /* i */ && integerPattern.test(digits)) {
      if (inRange(digits, int64Min, int64Max)) return { type: 'integer', value: Number(digits) };
      return fail(`integer ${quoted(token)} in field ${quoted(key)} is out of range`);
    }
    if (last === 0x75 /* u */ && unsignedPattern.test(digits)) {
      if (inRange(digits, 0n, uint64Max)) return { type: 'unsigned', value: Number(digits) };
      return fail(`unsigned integer ${quoted(token)} in field ${quoted(key)} is out of range`);
    }
    if (floatPattern.test(token)) {
      const value = Number(token);
      if (Number.isFinite(value)) return { type: 'float', value };
      return fail(`float ${quoted(token)} in field ${quoted(key)} is out of range`);
    }
    return fail(
      token === ''
        ? `missing value of field ${quoted(key)}`
        : `invalid value ${quoted(token)} in field ${quoted(key)}`,
    );
  }
}
