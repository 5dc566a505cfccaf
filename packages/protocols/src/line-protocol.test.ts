import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LineProtocolFieldValue, LineProtocolPoint } from './line-protocol.js';
import { parseLineProtocol } from './line-protocol.js';
import { LineProtocolSyntaxError } from './protocol-decode-error.js';

const point = (
  line: number,
  measurement: string,
  tags: [string, string][],
  fields: [string, LineProtocolFieldValue][],
  timestamp?: string,
): LineProtocolPoint => ({ line, measurement, tags, fields, timestamp });

const float = (value: number) => ({ type: 'float', value }) as const;

describe('parseLineProtocol', () => {
  it('parses the documented example', () => {
    expect(
      parseLineProtocol(
        'myMeasurement,tag1=value1,tag2=value2 fieldKey="fieldValue" 1556813561098000000',
      ),
    ).toEqual([
      point(
        1,
        'myMeasurement',
        [
          ['tag1', 'value1'],
          ['tag2', 'value2'],
        ],
        [['fieldKey', { type: 'string', value: 'fieldValue' }]],
        '1556813561098000000',
      ),
    ]);
  });

  it('reads every field type, with and without a timestamp', () => {
    expect(parseLineProtocol('m a=1,b=-1.5,c=1e3,d=.5,e=3i,f=-3i,g=3u,h=t,i="s"')).toEqual([
      point(
        1,
        'm',
        [],
        [
          ['a', float(1)],
          ['b', float(-1.5)],
          ['c', float(1000)],
          ['d', float(0.5)],
          ['e', { type: 'integer', value: 3 }],
          ['f', { type: 'integer', value: -3 }],
          ['g', { type: 'unsigned', value: 3 }],
          ['h', { type: 'boolean', value: true }],
          ['i', { type: 'string', value: 's' }],
        ],
      ),
    ]);
  });

  it.each(['t', 'T', 'true', 'True', 'TRUE'])('reads %s as true', (text) => {
    expect(parseLineProtocol(`m b=${text}`)[0]?.fields).toEqual([
      ['b', { type: 'boolean', value: true }],
    ]);
  });

  it.each(['f', 'F', 'false', 'False', 'FALSE'])('reads %s as false', (text) => {
    expect(parseLineProtocol(`m b=${text}`)[0]?.fields).toEqual([
      ['b', { type: 'boolean', value: false }],
    ]);
  });

  it('unescapes commas and spaces in measurements', () => {
    expect(parseLineProtocol('my\\ measure\\,ment=x f=1')[0]?.measurement).toBe(
      'my measure,ment=x',
    );
  });

  it('unescapes commas, equals signs and spaces in tag keys, tag values and field keys', () => {
    expect(parseLineProtocol('m,tag\\ key\\,\\==tag\\ value\\,\\= field\\ key\\,\\==1')).toEqual([
      point(1, 'm', [['tag key,=', 'tag value,=']], [['field key,=', float(1)]]),
    ]);
  });

  it('unescapes double quotes and backslashes in string values, and keeps other backslashes', () => {
    expect(parseLineProtocol('m s="say \\"hi\\", C:\\\\dir, tab\\t, comma, space =ok"')).toEqual([
      point(
        1,
        'm',
        [],
        [['s', { type: 'string', value: 'say "hi", C:\\dir, tab\\t, comma, space =ok' }]],
      ),
    ]);
  });

  it('keeps a backslash that escapes nothing in names', () => {
    expect(parseLineProtocol('cpu\\load,path=C:\\Windows f\\x=1')).toEqual([
      point(1, 'cpu\\load', [['path', 'C:\\Windows']], [['f\\x', float(1)]]),
    ]);
  });

  it('skips blank lines and comments, ignores CRLF, and numbers lines as written', () => {
    const text = '# comment\r\n\r\n  m f=1 10\r\n\t\nm f=2\n# last';
    expect(parseLineProtocol(text)).toEqual([
      point(3, 'm', [], [['f', float(1)]], '10'),
      point(5, 'm', [], [['f', float(2)]]),
    ]);
  });

  it('takes several spaces between sections and after the timestamp', () => {
    expect(parseLineProtocol('m,t=1   f=1   -5  ')).toEqual([
      point(1, 'm', [['t', '1']], [['f', float(1)]], '-5'),
    ]);
  });

  it('keeps repeated field keys in order', () => {
    expect(parseLineProtocol('m f=1,f=2')[0]?.fields).toEqual([
      ['f', float(1)],
      ['f', float(2)],
    ]);
  });

  it('reads int64 and uint64 bounds', () => {
    expect(
      parseLineProtocol(
        'm a=9223372036854775807i,b=-9223372036854775808i,c=18446744073709551615u 9223372036854775807',
      )[0],
    ).toEqual(
      point(
        1,
        'm',
        [],
        [
          // Numbers: the nearest doubles, 2^63 and 2^64.
          ['a', { type: 'integer', value: 2 ** 63 }],
          ['b', { type: 'integer', value: -(2 ** 63) }],
          ['c', { type: 'unsigned', value: 2 ** 64 }],
        ],
        '9223372036854775807',
      ),
    );
  });

  it.each([
    ['m', 'missing fields'],
    ['m,t=1', 'missing fields'],
    ['m ', 'missing fields'],
    [',t=1 f=1', 'missing measurement'],
    ['m,=1 f=1', 'missing tag key'],
    ['m,t f=1', 'missing value of tag "t"'],
    ['m,t= f=1', 'missing value of tag "t"'],
    ['m,t=a=b f=1', 'unescaped "=" in tag "t"'],
    ['m,t=1,t=2 f=1', 'duplicate tag "t"'],
    ['m =1', 'missing field key'],
    ['m f', 'missing value of field "f"'],
    ['m f=', 'missing value of field "f"'],
    ['m f=1,', 'missing field key'],
    ['m f="abc', 'unterminated string in field "f"'],
    ['m f="a"b', 'unexpected text after the string in field "f"'],
    ['m f=1.2.3', 'invalid value "1.2.3" in field "f"'],
    ['m f=tru', 'invalid value "tru" in field "f"'],
    ['m f=NaN', 'invalid value "NaN" in field "f"'],
    ['m f=1e400', 'float "1e400" in field "f" is out of range'],
    ['m f=1.5i', 'invalid value "1.5i" in field "f"'],
    ['m f=9223372036854775808i', 'integer "9223372036854775808i" in field "f" is out of range'],
    ['m f=-1u', 'invalid value "-1u" in field "f"'],
    [
      'm f=18446744073709551616u',
      'unsigned integer "18446744073709551616u" in field "f" is out of range',
    ],
    ['m f=1 12a', 'invalid timestamp "12a": expected an int64'],
    ['m f=1 9223372036854775808', 'invalid timestamp "9223372036854775808": expected an int64'],
    ['m f=1 1 2', 'unexpected text after the timestamp'],
  ])('refuses %j: %s', (text, problem) => {
    expect(() => parseLineProtocol(`m ok=1\n${text}`)).toThrow(
      new LineProtocolSyntaxError(2, problem),
    );
    try {
      parseLineProtocol(`m ok=1\n${text}`);
    } catch (err) {
      expect(err).toMatchObject({ line: 2, code: 'malformed_body', message: `line 2: ${problem}` });
    }
  });

  it('cuts long input short in error messages', () => {
    expect(() => parseLineProtocol(`m f=${'x'.repeat(1000)}`)).toThrow(
      `line 1: invalid value "${'x'.repeat(64)}…" in field "f"`,
    );
  });
});

// ---- property tests: a serializer written from the escaping rules is the oracle ----

/** Characters that exercise the escaping rules, mixed into arbitrary text. */
const tricky = fc.constantFrom(
  ',',
  ' ',
  '=',
  '\\',
  '"',
  '#',
  '\t',
  '\r',
  'i',
  'u',
  't',
  '0',
  'é',
  '🙂',
);
const character = fc.oneof(
  { weight: 2, arbitrary: tricky },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** Line protocol cannot carry a newline anywhere, nor end a name in a backslash (it would escape the separator). */
const name = fc
  .string({ unit: character, minLength: 1, maxLength: 12 })
  .filter((text) => !text.includes('\n') && !text.endsWith('\\'));
/** Nor start a measurement with `#` (a comment) or with the tab or space of indentation. */
const measurement = name.filter((text) => !/^[#\t ]/.test(text));

type Spelled = { value: LineProtocolFieldValue; text: string };

const fieldValue: fc.Arbitrary<Spelled> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({
    value: { type: 'float' as const, value },
    text: Object.is(value, -0) ? '-0' : String(value),
  })),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({
    value: { type: 'integer' as const, value: Number(value) },
    text: `${value}i`,
  })),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((value) => ({
    value: { type: 'unsigned' as const, value: Number(value) },
    text: `${value}u`,
  })),
  fc
    .constantFrom('t', 'T', 'true', 'True', 'TRUE', 'f', 'F', 'false', 'False', 'FALSE')
    .map((text) => ({ value: { type: 'boolean' as const, value: /^t/i.test(text) }, text })),
  fc
    .string({ unit: character, maxLength: 16 })
    .filter((text) => !text.includes('\n'))
    .map((value) => ({
      value: { type: 'string' as const, value },
      text: `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`,
    })),
);

const escapeMeasurement = (text: string) => text.replace(/[, ]/g, (c) => `\\${c}`);
const escapeName = (text: string) => text.replace(/[,= ]/g, (c) => `\\${c}`);

const generatedPoint = fc.record({
  measurement,
  tags: fc.uniqueArray(fc.tuple(name, name), { maxLength: 4, selector: ([key]) => key }),
  fields: fc.array(fc.tuple(name, fieldValue), { minLength: 1, maxLength: 4 }),
  timestamp: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: undefined }),
  /** Lines before the point: blank, comment or indentation-only. */
  noise: fc.array(fc.constantFrom('', '# note', '   ', '\t'), { maxLength: 2 }),
});

type GeneratedPoint = typeof generatedPoint extends fc.Arbitrary<infer P> ? P : never;

function serialize(points: GeneratedPoint[]): { text: string; expected: LineProtocolPoint[] } {
  const lines: string[] = [];
  const expected: LineProtocolPoint[] = [];
  for (const p of points) {
    lines.push(...p.noise);
    const tags = p.tags.map(([key, value]) => `,${escapeName(key)}=${escapeName(value)}`).join('');
    const fields = p.fields.map(([key, value]) => `${escapeName(key)}=${value.text}`).join(',');
    const timestamp = p.timestamp === undefined ? '' : ` ${p.timestamp}`;
    lines.push(`${escapeMeasurement(p.measurement)}${tags} ${fields}${timestamp}`);
    expected.push({
      line: lines.length,
      measurement: p.measurement,
      tags: p.tags.map(([key, value]) => [key, value]),
      fields: p.fields.map(([key, value]) => [key, value.value]),
      timestamp: p.timestamp?.toString(),
    });
  }
  return { text: lines.join('\n'), expected };
}

/** Arbitrary text, or valid text with a few characters changed: both must fail only cleanly. */
const damagedText = fc.oneof(
  fc.string({ unit: character, maxLength: 80 }),
  fc.string({
    unit: fc.constantFrom(
      'm',
      'f',
      '=',
      ',',
      ' ',
      '"',
      '\\',
      '\n',
      '1',
      'i',
      'u',
      '#',
      '-',
      '.',
      'e',
    ),
    maxLength: 40,
  }),
  fc
    .tuple(fc.array(generatedPoint, { minLength: 1, maxLength: 3 }), fc.nat(), fc.nat(), tricky)
    .map(([points, at, length, insert]) => {
      const { text } = serialize(points);
      const start = at % (text.length + 1);
      return (
        text.slice(0, start) + (length % 2 === 0 ? insert : '') + text.slice(start + (length % 3))
      );
    }),
);

describe('parseLineProtocol (properties)', () => {
  it('parses back exactly the points a correct serializer wrote', () => {
    fc.assert(
      fc.property(fc.array(generatedPoint, { minLength: 1, maxLength: 5 }), (points) => {
        const { text, expected } = serialize(points);
        expect(parseLineProtocol(text)).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('throws nothing but a LineProtocolSyntaxError naming a line of the input', () => {
    fc.assert(
      fc.property(damagedText, (text) => {
        try {
          parseLineProtocol(text);
        } catch (err) {
          expect(err).toBeInstanceOf(LineProtocolSyntaxError);
          const { line, message } = err as LineProtocolSyntaxError;
          expect(line).toBeGreaterThanOrEqual(1);
          expect(line).toBeLessThanOrEqual(text.split('\n').length);
          expect(message.startsWith(`line ${line}: `)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
