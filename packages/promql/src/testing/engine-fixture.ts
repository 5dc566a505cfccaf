import { expect } from 'vitest';
import type { Expr } from '../ast.js';
import { formatPromql } from '../format-promql.js';
import { labelsToRecord } from '../labels.js';
import type { MemorySeries, TierTimes } from '../memory-series-source.js';
import { createMemorySeriesSource } from '../memory-series-source.js';
import type { PromqlEngine } from '../promql-engine.js';
import { createPromqlEngine } from '../promql-engine.js';
import { parsePromql } from '../parse-promql.js';
import { unquotePromqlString } from '../promql-literals.js';
import type { QueryValue } from '../values.js';

/** One sample of an instant result: its labels as a record, and its value. */
export type Row = [labels: Record<string, string>, value: number];

/**
 * An engine over series held in memory, with Prometheus' defaults (5 min lookback); its rollup
 * tiers keep `tierTimes` (memory-series-source.ts).
 */
export function engineOver(
  series: MemorySeries[],
  overrides: { timeoutMs?: number; maxSeries?: number; tierTimes?: TierTimes } = {},
): PromqlEngine {
  return createPromqlEngine({
    source: createMemorySeriesSource(
      series,
      overrides.tierTimes === undefined ? {} : { tierTimes: overrides.tierTimes },
    ),
    lookbackDeltaMs: 300_000,
    maxSamples: 50_000_000,
    timeoutMs: overrides.timeoutMs ?? 10_000,
    maxSeries: overrides.maxSeries ?? 10_000,
    maxPointsPerSeries: 11_000,
  });
}

/** A series with `count` samples, one every `intervalMs` from 0, the i-th valued f(i). */
export function everyInterval(
  intervalMs: number,
  labels: Record<string, string>,
  count: number,
  f: (i: number) => number,
): MemorySeries {
  return { labels, samples: Array.from({ length: count }, (_, i) => [i * intervalMs, f(i)]) };
}

/** The samples of an instant vector, in the engine's order. */
export function vectorOf(value: QueryValue): Row[] {
  if (value.resultType !== 'vector') throw new Error(`not a vector: ${value.resultType}`);
  return value.result.map((s) => [labelsToRecord(s.metric), s.v]);
}

/** The series of a matrix: labels and [ms, value] points. */
export function matrixOf(value: QueryValue): [Record<string, string>, [number, number][]][] {
  if (value.resultType !== 'matrix') throw new Error(`not a matrix: ${value.resultType}`);
  return value.result.map((s) => [labelsToRecord(s.metric), s.points.map((p) => [p.t, p.v])]);
}

const labelsKeyOf = (labels: Record<string, string>): string =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** Orders rows by their labels, whatever the order of each one's keys. */
export function byLabels([a]: Row, [b]: Row): number {
  return labelsKeyOf(a).localeCompare(labelsKeyOf(b));
}

/** An instant result as rows ordered by labels; a scalar is one row without labels. */
export function rowsOf(value: QueryValue): Row[] {
  if (value.resultType === 'scalar') return [[{}, value.result.v]];
  return vectorOf(value).sort(byLabels);
}

/** Prometheus' almostEqual (promql/test.go): NaN equals NaN, else 1e-6 relative. */
export function almostEqual(a: number, b: number): boolean {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  if (a === b) return true;
  const minNormal = 2.2250738585072014e-308;
  const diff = Math.abs(a - b);
  if (a === 0 || b === 0 || diff < minNormal) return diff < 1e-6 * minNormal;
  return diff / (Math.abs(a) + Math.abs(b)) < 1e-6;
}

const durationUnitsMs: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
};

/** A Prometheus duration (`1h30m`, `10s`, `0`) in ms. */
function parseDurationMs(text: string): number {
  if (text === '0') return 0;
  let ms = 0;
  let rest = text;
  while (rest !== '') {
    const m = /^(\d+)(ms|s|m|h|d|w|y)/.exec(rest);
    if (m === null) throw new Error(`bad duration: ${text}`);
    ms += Number(m[1]) * durationUnitsMs[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return ms;
}

/** A number as the test language writes it: decimal, Inf or NaN (`0x10` is 0 eleven times). */
function parseNumber(text: string): number {
  const m = /^([+-]?)(inf|nan)$/i.exec(text);
  if (m !== null) {
    if (m[2]!.toLowerCase() === 'nan') return NaN;
    return m[1] === '-' ? -Infinity : Infinity;
  }
  const n = Number(text);
  if (text.trim() === '' || Number.isNaN(n)) throw new Error(`bad number: ${text}`);
  return n;
}

const unsigned = String.raw`(?:[Ii]nf|NaN|\d*\.?\d+(?:[eE][+-]?\d+)?)`;
const expandPattern = new RegExp(String.raw`^([+-]?${unsigned})(?:([+-]${unsigned})?x(\d+))?$`);

/** One value of a series description: a number, an omission (null) or a staleness marker. */
type SequenceValue = number | null | 'stale';

/**
 * The values of a series description, as Prometheus' test language writes them: `_` omitted,
 * `stale`, `a`, `axN` (a, N + 1 times), `a+bxN` / `a-bxN` (N + 1 values from a, adding b each
 * time), `_xN` (N omitted).
 */
function parseSequence(tokens: string[]): SequenceValue[] {
  const out: SequenceValue[] = [];
  for (const token of tokens) {
    if (token === '_') out.push(null);
    else if (token === 'stale') out.push('stale');
    else if (token.startsWith('_x'))
      for (let i = 0; i < Number(token.slice(2)); i++) out.push(null);
    else {
      const m = expandPattern.exec(token);
      if (m === null) throw new Error(`bad series value: ${token}`);
      let v = parseNumber(m[1]!);
      if (m[3] === undefined) {
        out.push(v);
        continue;
      }
      const add = m[2] === undefined ? 0 : parseNumber(m[2]);
      for (let i = 0; i <= Number(m[3]); i++) {
        out.push(v);
        v += add;
      }
    }
  }
  return out;
}

/** `name{a="b", c='d'} rest` → labels and the rest of the line. */
function parseMetric(line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  const name = /^[a-zA-Z_:][\w:]*/.exec(line);
  let rest = line;
  if (name !== null) {
    labels.__name__ = name[0];
    rest = rest.slice(name[0].length);
  }
  if (rest.startsWith('{')) {
    rest = rest.slice(1).trimStart();
    const pair = /^([a-zA-Z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*,?\s*/;
    while (!rest.startsWith('}')) {
      const m = pair.exec(rest);
      if (m === null) throw new Error(`bad labels: ${line}`);
      labels[m[1]!] = unquotePromqlString(m[2]!);
      rest = rest.slice(m[0].length);
    }
    rest = rest.slice(1);
  }
  return { labels, rest: rest.trim() };
}

/**
 * Series in the notation of Prometheus' test scripts (`metric{a="b"} 0+1x1000`), one sample every
 * `intervalMs` from 0; `stale` is a flagged staleness marker, NaN a value.
 */
export function load(intervalMs: number, lines: Record<string, string>): MemorySeries[] {
  return Object.entries(lines).map(([selector, values]) =>
    loadLine(intervalMs, `${selector} ${values}`),
  );
}

function loadLine(intervalMs: number, line: string): MemorySeries {
  const { labels, rest } = parseMetric(line);
  const samples: [number, number][] = [];
  const stale: number[] = [];
  parseSequence(rest.split(/\s+/).filter((t) => t !== '')).forEach((v, i) => {
    if (v === null) return;
    samples.push([i * intervalMs, v === 'stale' ? NaN : v]);
    stale.push(v === 'stale' ? 1 : 0);
  });
  return { labels, samples, stale };
}

type Eval = {
  line: number;
  query: string;
  atMs: number;
  ordered: boolean;
  fail: boolean;
  scalar: number | null;
  rows: Row[];
};

type Command = { load: MemorySeries[] } | { eval: Eval } | 'clear';

function parseScript(script: string): Command[] {
  const lines = script.split('\n').map((l) => (l.trim().startsWith('#') ? '' : l.trim()));
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    if (line === 'clear') {
      commands.push('clear');
      continue;
    }
    const loadMatch = /^load\s+(\S+)$/.exec(line);
    if (loadMatch !== null) {
      const intervalMs = parseDurationMs(loadMatch[1]!);
      const series: MemorySeries[] = [];
      while (i + 1 < lines.length && lines[i + 1] !== '')
        series.push(loadLine(intervalMs, lines[++i]!));
      commands.push({ load: series });
      continue;
    }
    const evalMatch = /^eval(?:_(fail|ordered))?\s+instant\s+at\s+(\S+)\s+(.+)$/.exec(line);
    if (evalMatch === null) throw new Error(`line ${i + 1}: bad command: ${line}`);
    const cmd: Eval = {
      line: i + 1,
      query: evalMatch[3]!,
      atMs: parseDurationMs(evalMatch[2]!),
      ordered: evalMatch[1] === 'ordered',
      fail: evalMatch[1] === 'fail',
      scalar: null,
      rows: [],
    };
    while (i + 1 < lines.length && lines[i + 1] !== '') {
      const expected = lines[++i]!;
      if (/^\S+$/.test(expected) && !/[{a-zA-Z_:]/.test(expected.replace(/inf|nan/i, ''))) {
        cmd.scalar = parseNumber(expected);
        break;
      }
      const { labels, rest } = parseMetric(expected);
      const [value] = parseSequence(rest.split(/\s+/));
      cmd.rows.push([labels, typeof value === 'number' ? value : NaN]);
    }
    commands.push({ eval: cmd });
  }
  return commands;
}

const show = (rows: Row[]): string =>
  rows.map(([l, v]) => `${labelsKeyOf(l)} ${v}`).join('; ') || '(empty)';

/** What is wrong with `got` as an answer to `cmd`, as Prometheus' compareResult judges it. */
function compare(cmd: Eval, got: QueryValue): string | null {
  if (cmd.scalar !== null) {
    if (got.resultType !== 'scalar') return `want scalar ${cmd.scalar}, got ${got.resultType}`;
    return almostEqual(cmd.scalar, got.result.v) ? null : `want ${cmd.scalar}, got ${got.result.v}`;
  }
  if (got.resultType !== 'vector') return `want a vector, got ${got.resultType}`;
  return compareRows(cmd, vectorOf(got), cmd.ordered);
}

function compareRows(cmd: Eval, rows: Row[], ordered: boolean): string | null {
  const want = new Map(cmd.rows.map((row, i) => [labelsKeyOf(row[0]), { row, i }]));
  const wrong = rows.some(([labels, v], i) => {
    const w = want.get(labelsKeyOf(labels));
    return w === undefined || !almostEqual(w.row[1], v) || (ordered && w.i !== i);
  });
  if (wrong || rows.length !== want.size) return `want ${show(cmd.rows)}, got ${show(rows)}`;
  return null;
}

async function runEval(engine: PromqlEngine, cmd: Eval): Promise<string | null> {
  let got: QueryValue;
  try {
    got = await engine.instantQuery(cmd.query, cmd.atMs);
  } catch (err) {
    return cmd.fail ? null : `failed: ${(err as Error).message}`;
  }
  if (cmd.fail) return 'succeeded, want an error';
  const problem = compare(cmd, got);
  if (problem !== null || cmd.ordered) return problem;
  // As Prometheus' test does: the same answer from the middle step of a range query.
  let range: QueryValue;
  try {
    range = await engine.rangeQuery(cmd.query, cmd.atMs - 60_000, cmd.atMs + 60_000, 60_000);
  } catch (err) {
    return `range mode failed: ${(err as Error).message}`;
  }
  const rows = matrixOf(range).flatMap(([labels, points]) =>
    points.filter(([t]) => t === cmd.atMs).map(([, v]): Row => [labels, v]),
  );
  const rangeProblem =
    got.resultType === 'scalar'
      ? compare(cmd, { resultType: 'scalar', result: { t: cmd.atMs, v: rows[0]?.[1] ?? NaN } })
      : compareRows(cmd, rows, false);
  return rangeProblem === null ? null : `range mode: ${rangeProblem}`;
}

/** Functions whose answer varies with the evaluation time even on pinned arguments (2.42). */
const atModifierUnsafeFunctions = new Set([
  'days_in_month',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'hour',
  'minute',
  'month',
  'year',
  'predict_linear',
  'time',
  'timestamp',
]);

/**
 * Prometheus' atModifierTestCases (promql/test.go): the query with `@ <its time>` on every
 * selector and subquery not already pinned nor inside a subquery, to be answered the same at
 * other times; none when it calls a function whose answer depends on the evaluation time.
 */
function atModifierVariants(query: string, atMs: number): { query: string; atMs: number }[] {
  const expr = parsePromql(query);
  let unsafe = false;
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case 'vector':
      case 'subquery':
        if (e.atMs === null && e.startOrEnd === null) e.atMs = atMs;
        // Prometheus leaves everything within a pinned subquery as it is, calls unchecked.
        return;
      case 'matrix':
        return visit(e.selector);
      case 'call':
        if (atModifierUnsafeFunctions.has(e.func.name)) unsafe = true;
        return e.args.forEach(visit);
      case 'aggregate':
        if (e.param !== null) visit(e.param);
        return visit(e.expr);
      case 'binary':
        visit(e.lhs);
        return visit(e.rhs);
      case 'unary':
      case 'paren':
      case 'step-invariant':
        return visit(e.expr);
      case 'number':
      case 'string':
        return;
    }
  };
  visit(expr);
  if (unsafe) return [];
  const pinned = formatPromql(expr);
  const times =
    atMs === 0 ? [-1000, 0, 1000] : [-10 * atMs, 0, Math.trunc(atMs / 5), atMs, 10 * atMs];
  return times.map((t) => ({ query: pinned, atMs: t }));
}

/**
 * Runs a script in the language of Prometheus' promql/testdata/*.test (load, clear, eval,
 * eval_ordered, eval_fail) and expects every evaluation to pass, listing the ones that do not.
 */
export async function expectPromqlScript(script: string): Promise<void> {
  let series: MemorySeries[] = [];
  let engine = engineOver(series);
  const failures: string[] = [];
  for (const command of parseScript(script)) {
    if (command === 'clear') {
      series = [];
      engine = engineOver(series);
    } else if ('load' in command) {
      series = [...series, ...command.load];
      engine = engineOver(series);
    } else {
      const cmd = command.eval;
      for (const variant of [
        cmd,
        ...atModifierVariants(cmd.query, cmd.atMs).map((v) => ({ ...cmd, ...v })),
      ]) {
        const problem = await runEval(engine, variant);
        if (problem !== null) {
          failures.push(`line ${cmd.line}: ${variant.query} at ${variant.atMs} ms: ${problem}`);
        }
      }
    }
  }
  expect(failures).toEqual([]);
  console.log('EVALS', parseScript(script).filter((c) => c !== 'clear' && 'eval' in c).length);
}
