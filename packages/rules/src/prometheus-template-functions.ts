import { compileRe2Regexp } from '@monitor/promql';
import type { GoFunction, GoValue } from '@monitor/go-template';
import {
  formatGoFloat,
  formatGoValue,
  goQueryEscape,
  goTypeName,
  GoHtml,
  GoMap,
  GoStruct,
  GoTime,
  stringMap,
} from '@monitor/go-template';
import { parsePrometheusDuration } from './prometheus-duration.js';

/** One sample of a template query's answer. */
type TemplateSample = { labels: Readonly<Record<string, string>>; value: number };

/** Runs `query` (PromQL) at the template's evaluation time; rejects with the reason to show. */
type TemplateQuery = (query: string) => Promise<readonly TemplateSample[]>;

/** What Prometheus' templates can reach besides their data. */
export type TemplateEnvironment = {
  query?: TemplateQuery;
  /** The externally reachable URL of the service, for `externalURL` and `pathPrefix`. */
  externalUrl?: string;
};

/** Names of Prometheus' template functions (Prometheus 2.42's funcMap). */
export const prometheusFunctionNames = [
  'query',
  'first',
  'label',
  'value',
  'strvalue',
  'args',
  'reReplaceAll',
  'safeHtml',
  'match',
  'title',
  'toUpper',
  'toLower',
  'graphLink',
  'tableLink',
  'sortByLabel',
  'humanize',
  'humanize1024',
  'humanizeDuration',
  'humanizePercentage',
  'humanizeTimestamp',
  'toTime',
  'pathPrefix',
  'externalURL',
  'parseDuration',
  'stripPort',
  'stripDomain',
] as const;

const sampleType = '*template.sample';

function sample(value: GoValue): GoStruct {
  if (value instanceof GoStruct && value.typeName === sampleType) return value;
  throw new Error(`wrong type for value; expected *template.sample; got ${goTypeName(value)}`);
}

function queryResult(value: GoValue): readonly GoStruct[] {
  if (Array.isArray(value)) return (value as readonly GoValue[]).map(sample);
  throw new Error(`wrong type for value; expected template.queryResult; got ${goTypeName(value)}`);
}

/** Go's strconv.ParseFloat as templates' convertToFloat uses it on strings. */
function parseGoFloat(text: string): number {
  const body = text.replace(/^[+-]/, '');
  if (/^(inf|infinity)$/i.test(body)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (
    /^(\d+(_\d+)*\.?(\d+(_\d+)*)?|\.\d+(_\d+)*)([eE][+-]?\d+)?$/.test(body) &&
    !body.includes('_')
  ) {
    return Number(text);
  }
  if (/^0[xX]/.test(body)) {
    const hex = /^0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)[pP]([+-]?\d+)$/.exec(body);
    if (hex !== null) {
      const value =
        (parseInt(`${hex[1]}${hex[2]}` || '0', 16) / 16 ** hex[2]!.length) * 2 ** Number(hex[3]);
      return text.startsWith('-') ? -value : value;
    }
  }
  throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
}

function toFloat(value: GoValue): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return parseGoFloat(value);
  throw new Error(`can't convert ${goTypeName(value)} to float`);
}

const g4 = (v: number): string => formatGoFloat(v, 'g', 4);

function humanize(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return g4(v);
  let value = v;
  let prefix = '';
  if (Math.abs(value) >= 1) {
    for (const p of ['k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y']) {
      if (Math.abs(value) < 1000) break;
      prefix = p;
      value /= 1000;
    }
    return `${g4(value)}${prefix}`;
  }
  for (const p of ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y']) {
    if (Math.abs(value) >= 1) break;
    prefix = p;
    value *= 1000;
  }
  return `${g4(value)}${prefix}`;
}

function humanize1024(v: number): string {
  if (Math.abs(v) <= 1 || !Number.isFinite(v)) return g4(v);
  let value = v;
  let prefix = '';
  for (const p of ['ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'Zi', 'Yi']) {
    if (Math.abs(value) < 1024) break;
    prefix = p;
    value /= 1024;
  }
  return `${g4(value)}${prefix}`;
}

/**
 * Go's int64(v) on amd64: truncated toward zero, and the minimum int64 for anything out of
 * range (which humanizeDuration then prints as a negative count of days).
 */
function goInt64(v: number): bigint {
  return Math.abs(v) < 2 ** 63 ? BigInt(Math.trunc(v)) : -(2n ** 63n);
}

function humanizeDuration(v: number): string {
  if (!Number.isFinite(v)) return g4(v);
  if (v === 0) return `${g4(v)}s`;
  if (Math.abs(v) >= 1) {
    const sign = v < 0 ? '-' : '';
    const abs = Math.abs(v);
    const whole = goInt64(abs);
    const seconds = whole % 60n;
    const minutes = (whole / 60n) % 60n;
    const hours = (whole / 3600n) % 24n;
    const days = whole / 86400n;
    if (days !== 0n) return `${sign}${days}d ${hours}h ${minutes}m ${seconds}s`;
    if (hours !== 0n) return `${sign}${hours}h ${minutes}m ${seconds}s`;
    if (minutes !== 0n) return `${sign}${minutes}m ${seconds}s`;
    return `${sign}${g4(abs)}s`;
  }
  let value = v;
  let prefix = '';
  for (const p of ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y']) {
    if (Math.abs(value) >= 1) break;
    prefix = p;
    value *= 1000;
  }
  return `${g4(value)}${prefix}s`;
}

/** Seconds since the epoch as nanoseconds, or Go's overflow error. */
function nanos(v: number): bigint {
  const ns = v * 1e9;
  if (ns > 9.223372036854776e18 || ns < -9.223372036854776e18) {
    throw new Error(
      `${formatGoFloat(v, 'g', -1)} cannot be represented as a nanoseconds timestamp since it overflows int64`,
    );
  }
  return BigInt(Math.trunc(ns));
}

/** Go's strings.Title: the first letter of every word upper-cased. */
function title(text: string): string {
  let previous = ' ';
  let out = '';
  for (const c of text) {
    out += isSeparator(previous) ? c.toUpperCase() : c;
    previous = c;
  }
  return out;
}

function isSeparator(c: string): boolean {
  if (c.charCodeAt(0) <= 0x7f) return !/[0-9A-Za-z_]/.test(c);
  if (/[\p{L}\p{Nd}]/u.test(c)) return false;
  return /\s/u.test(c);
}

/** Go's Regexp.Expand template: `$1`, `$name`, `${name}`, `$$`. */
function expandReplacement(template: string, match: RegExpExecArray): string {
  return template.replace(
    /\$(\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/g,
    (whole, _all, braced?: string, bare?: string) => {
      if (whole === '$$') return '$';
      const name = braced ?? bare!;
      if (/^\d+$/.test(name)) return match[Number(name)] ?? '';
      return match.groups?.[name] ?? '';
    },
  );
}

/** net.SplitHostPort: the host and port, or null where Go returns an error. */
function splitHostPort(hostPort: string): { host: string; port: string } | null {
  const colon = hostPort.lastIndexOf(':');
  if (colon === -1) return null;
  let host = hostPort.slice(0, colon);
  const port = hostPort.slice(colon + 1);
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) return null;
    host = host.slice(1, -1);
    if (host.includes('[') || host.includes(']')) return null;
  } else if (host.includes(':') || host.includes('[') || host.includes(']')) {
    return null;
  }
  if (port.includes('[') || port.includes(']')) return null;
  return { host, port };
}

function isIp(host: string): boolean {
  return (
    /^(\d{1,3}\.){3}\d{1,3}$/.test(host) || (host.includes(':') && /^[0-9a-fA-F:.]+$/.test(host))
  );
}

function stripDomain(hostPort: string): string {
  const split = splitHostPort(hostPort);
  const host = split === null ? hostPort : split.host;
  if (isIp(host)) return hostPort;
  const first = host.split('.')[0]!;
  if (split !== null && split.port !== '') {
    return first.includes(':') ? `[${first}]:${split.port}` : `${first}:${split.port}`;
  }
  return first;
}

/** Prometheus' template functions for one expansion. */
export function prometheusFunctions(environment: TemplateEnvironment): Map<string, GoFunction> {
  const externalUrl = environment.externalUrl ?? '';
  const fns = new Map<string, GoFunction>();
  const str = (fn: (text: string) => GoValue): GoFunction => ({
    params: ['string'],
    call: ([text]) => fn(text as string),
  });
  const num = (fn: (v: number) => GoValue): GoFunction => ({
    params: ['any'],
    call: ([v]) => fn(toFloat(v!)),
  });
  fns.set('query', {
    params: ['string'],
    async call([q]) {
      if (environment.query === undefined) throw new Error('queries are not available here');
      const samples = await environment.query(q as string);
      return samples.map(
        (s) => new GoStruct({ Labels: stringMap(s.labels), Value: s.value }, sampleType),
      );
    },
  });
  fns.set('first', {
    params: ['any'],
    call([v]) {
      const result = queryResult(v!);
      if (result.length === 0) throw new Error('first() called on vector with no elements');
      return result[0]!;
    },
  });
  const labelOf = (s: GoStruct, name: string): string =>
    ((s.fields.Labels as GoMap).entries.get(name) as string | undefined) ?? '';
  fns.set('label', {
    params: ['string', 'any'],
    call: ([l, s]) => labelOf(sample(s!), l as string),
  });
  fns.set('value', { params: ['any'], call: ([s]) => sample(s!).fields.Value! });
  fns.set('strvalue', { params: ['any'], call: ([s]) => labelOf(sample(s!), '__value__') });
  fns.set('args', {
    params: [],
    variadic: 'any',
    call: (args) =>
      new GoMap(new Map(args.map((a, i) => [`arg${i}`, a])), null, 'map[string]interface {}'),
  });
  fns.set('reReplaceAll', {
    params: ['string', 'string', 'string'],
    call([pattern, replacement, text]) {
      const re = compileRe2Regexp(pattern as string, false);
      const global = new RegExp(re.source, `${re.flags}g`);
      return (text as string).replace(global, (...parts: unknown[]) => {
        const match = Object.assign(
          parts.slice(0, -2).filter((p) => typeof p === 'string' || p === undefined) as string[],
          {
            groups:
              typeof parts.at(-1) === 'object'
                ? (parts.at(-1) as Record<string, string>)
                : undefined,
          },
        ) as unknown as RegExpExecArray;
        return expandReplacement(replacement as string, match);
      });
    },
  });
  fns.set(
    'safeHtml',
    str((text) => new GoHtml(text)),
  );
  fns.set('match', {
    params: ['string', 'string'],
    call: ([pattern, text]) => compileRe2Regexp(pattern as string, false).test(text as string),
  });
  fns.set('title', str(title));
  fns.set(
    'toUpper',
    str((text) => text.toUpperCase()),
  );
  fns.set(
    'toLower',
    str((text) => text.toLowerCase()),
  );
  fns.set(
    'graphLink',
    str((expr) => `/graph?g0.expr=${goQueryEscape(expr)}&g0.tab=0`),
  );
  fns.set(
    'tableLink',
    str((expr) => `/graph?g0.expr=${goQueryEscape(expr)}&g0.tab=1`),
  );
  fns.set('sortByLabel', {
    params: ['string', 'any'],
    call([l, v]) {
      // Sorted in place, as Go's sort.Stable on the same slice.
      const result = queryResult(v!);
      return [...result].sort((a, b) => {
        const x = labelOf(a, l as string);
        const y = labelOf(b, l as string);
        return x < y ? -1 : x > y ? 1 : 0;
      });
    },
  });
  fns.set('humanize', num(humanize));
  fns.set('humanize1024', num(humanize1024));
  fns.set('humanizeDuration', num(humanizeDuration));
  fns.set(
    'humanizePercentage',
    num((v) => `${g4(v * 100)}%`),
  );
  fns.set(
    'humanizeTimestamp',
    num((v) => {
      if (!Number.isFinite(v)) return g4(v);
      // model.TimeFromUnixNano keeps milliseconds.
      const ms = nanos(v) / 1_000_000n;
      return formatGoValue(new GoTime(ms * 1_000_000n));
    }),
  );
  fns.set(
    'toTime',
    num((v) => {
      if (!Number.isFinite(v))
        throw new Error(
          `${g4(v)} cannot be represented as a nanoseconds timestamp since it overflows int64`,
        );
      return new GoTime(nanos(v));
    }),
  );
  fns.set('pathPrefix', { params: [], call: () => safeUrlPath(externalUrl) });
  fns.set('externalURL', { params: [], call: () => externalUrl });
  fns.set(
    'parseDuration',
    str((text) => parsePrometheusDuration(text) / 1000),
  );
  fns.set(
    'stripPort',
    str((hostPort) => splitHostPort(hostPort)?.host ?? hostPort),
  );
  fns.set('stripDomain', str(stripDomain));
  return fns;
}

function safeUrlPath(url: string): string {
  try {
    return new URL(url).pathname.replace(/^\/$/, '');
  } catch {
    return '';
  }
}
