import { parsePromql } from '@monitor/promql';
import type { Document, Node as YamlNode } from 'yaml';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar } from 'yaml';
import { checkAlertTemplate } from './alert-template.js';
import { parsePrometheusDuration } from './prometheus-duration.js';
import type { AlertingRule, RecordingRule, Rule, RuleGroup } from './rule-group.js';

/** A rule file or group as `promtool check rules` judges it: the groups, or every error. */
export type RuleParseResult = { ok: true; groups: RuleGroup[] } | { ok: false; errors: string[] };

/** Where a YAML node starts, 1-based, as yaml.v3 reports it (0:0 for a node that is absent). */
type Position = { line: number; col: number };

/** A decoded scalar or collection with its position; `text` is a scalar's text (yaml.Node.Value). */
type Decoded = { node: YamlNode | null; position: Position };

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const nullPattern = /^(~|null|Null|NULL|)$/;

/**
 * Parses a Prometheus rule file (`groups:` …) and validates it as Prometheus 2.42's rulefmt
 * does for `promtool check rules`: strict fields, durations, PromQL expressions (on
 * @monitor/promql's parser), names, and alert templates. Errors carry Prometheus' text.
 */
export function parseRuleFile(text: string): RuleParseResult {
  return parseWith(text, 'file');
}

/**
 * Parses one rule group (the body of the ruler API's POST), validated as in a file.
 */
export function parseRuleGroup(text: string): RuleParseResult {
  return parseWith(text, 'group');
}

function parseWith(text: string, shape: 'file' | 'group'): RuleParseResult {
  const lineCounter = new LineCounter();
  // Only the first document counts, as yaml.v3's Decoder.Decode reads one.
  const docs = parseAllDocuments(text, {
    lineCounter,
    schema: 'failsafe',
    merge: true,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  if (doc === undefined) return shape === 'file' ? { ok: true, groups: [] } : emptyGroup();
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    const { line } = lineCounter.linePos(error.pos[0]);
    return { ok: false, errors: [`yaml: line ${line}: ${error.message.split('\n')[0]}`] };
  }
  const decoder = new Decoder(doc, lineCounter);
  const root = decoder.resolve(doc.contents);
  let groupNodes: Decoded[];
  if (shape === 'file') {
    const fields = decoder.struct(root, 'rulefmt.RuleGroups', ['groups']);
    groupNodes = decoder.sequence(fields.get('groups') ?? null, '[]rulefmt.RuleGroup');
  } else {
    if (root === null || isNullScalar(root)) return emptyGroup();
    groupNodes = [{ node: root, position: decoder.position(root) }];
  }
  const groups: RuleGroup[] = [];
  const validation: string[] = [];
  const seen = new Set<string>();
  for (const groupNode of groupNodes) {
    const fields = decoder.struct(groupNode.node, 'rulefmt.RuleGroup', [
      'name',
      'interval',
      'limit',
      'rules',
    ]);
    const name = decoder.string(fields.get('name') ?? null);
    const intervalMs = decoder.duration(fields.get('interval') ?? null);
    const limit = decoder.int(fields.get('limit') ?? null);
    const ruleNodes = decoder.sequence(fields.get('rules') ?? null, '[]rulefmt.RuleNode');
    const { line, col } = groupNode.position;
    if (name === '') validation.push(`${line}:${col}: Groupname must not be empty`);
    if (seen.has(name))
      validation.push(`${line}:${col}: groupname: "${name}" is repeated in the same file`);
    seen.add(name);
    const rules: Rule[] = [];
    ruleNodes.forEach((ruleNode, i) => {
      const rule = decodeRule(decoder, ruleNode);
      for (const { message, at, also } of validateRule(rule)) {
        const context = `group "${name}", rule ${i + 1}, "${rule.alert.text !== '' ? rule.alert.text : rule.record.text}"`;
        const where = [at, also].map((p) => (p == null ? '' : `${p.line}:${p.col}: `)).join('');
        validation.push(`${where}${context}: ${message}`);
      }
      rules.push(toRule(rule));
    });
    groups.push({ name, intervalMs: intervalMs ?? null, limit, rules });
  }
  if (decoder.fatal !== null) return { ok: false, errors: [decoder.fatal] };
  if (decoder.errors.length > 0) {
    return { ok: false, errors: [`yaml: unmarshal errors:\n  ${decoder.errors.join('\n  ')}`] };
  }
  if (validation.length > 0) return { ok: false, errors: validation };
  return { ok: true, groups };
}

function emptyGroup(): RuleParseResult {
  return { ok: false, errors: ['0:0: Groupname must not be empty'] };
}

function isNullScalar(node: YamlNode): boolean {
  return isScalar(node) && node.type === Scalar.PLAIN && nullPattern.test(String(node.value));
}

/** A rule as written: yaml.Node-like fields keep their text and position for errors. */
type RuleNode = {
  record: { text: string; at: Position | null };
  alert: { text: string; at: Position | null };
  expr: { text: string; at: Position | null };
  forMs: number;
  keepFiringForMs: number;
  labels: Map<string, string>;
  annotations: Map<string, string>;
};

function decodeRule(decoder: Decoder, ruleNode: Decoded): RuleNode {
  const fields = decoder.struct(ruleNode.node, 'rulefmt.RuleNode', [
    'record',
    'alert',
    'expr',
    'for',
    'keep_firing_for',
    'labels',
    'annotations',
  ]);
  return {
    record: decoder.nodeText(fields.get('record') ?? null),
    alert: decoder.nodeText(fields.get('alert') ?? null),
    expr: decoder.nodeText(fields.get('expr') ?? null),
    forMs: decoder.duration(fields.get('for') ?? null) ?? 0,
    keepFiringForMs: decoder.duration(fields.get('keep_firing_for') ?? null) ?? 0,
    labels: decoder.stringMap(fields.get('labels') ?? null),
    annotations: decoder.stringMap(fields.get('annotations') ?? null),
  };
}

/** A rule's error and the YAML nodes it names (rulefmt's WrappedError: node, nodeAlt). */
type RuleError = { message: string; at: Position | null; also?: Position };

/** rulefmt's RuleNode.Validate, in its order. */
function validateRule(rule: RuleNode): RuleError[] {
  const errors: RuleError[] = [];
  const zero = { line: 0, col: 0 };
  if (rule.record.text !== '' && rule.alert.text !== '') {
    errors.push({
      message: "only one of 'record' and 'alert' must be set",
      at: rule.record.at ?? zero,
      also: rule.alert.at ?? zero,
    });
  }
  if (rule.record.text === '' && rule.alert.text === '') {
    errors.push({ message: "one of 'record' or 'alert' must be set", at: rule.record.at ?? zero });
  }
  if (rule.expr.text === '') {
    errors.push({ message: "field 'expr' must be set in rule", at: rule.expr.at ?? zero });
  } else {
    try {
      parsePromql(rule.expr.text);
    } catch (error) {
      errors.push({
        message: `could not parse expression: ${(error as Error).message}`,
        at: rule.expr.at ?? zero,
      });
    }
  }
  if (rule.record.text !== '') {
    const at = rule.record.at ?? zero;
    if (rule.annotations.size > 0) {
      errors.push({ message: "invalid field 'annotations' in recording rule", at });
    }
    if (rule.forMs !== 0) errors.push({ message: "invalid field 'for' in recording rule", at });
    if (rule.keepFiringForMs !== 0) {
      errors.push({ message: "invalid field 'keep_firing_for' in recording rule", at });
    }
    if (!metricNamePattern.test(rule.record.text)) {
      errors.push({ message: `invalid recording rule name: ${rule.record.text}`, at });
    }
  }
  for (const name of rule.labels.keys()) {
    if (!labelNamePattern.test(name) || name === '__name__') {
      errors.push({ message: `invalid label name: ${name}`, at: null });
    }
  }
  for (const name of rule.annotations.keys()) {
    if (!labelNamePattern.test(name)) {
      errors.push({ message: `invalid annotation name: ${name}`, at: null });
    }
  }
  if (rule.alert.text !== '') {
    for (const [kind, map] of [
      ['label', rule.labels],
      ['annotation', rule.annotations],
    ] as const) {
      for (const [name, value] of map) {
        const error = checkAlertTemplate(rule.alert.text, value);
        if (error !== null) errors.push({ message: `${kind} "${name}": ${error}`, at: null });
      }
    }
  }
  return errors;
}

function toRule(rule: RuleNode): Rule {
  const labels = Object.fromEntries(rule.labels);
  if (rule.record.text !== '') {
    const recording: RecordingRule = {
      kind: 'record',
      record: rule.record.text,
      expr: rule.expr.text,
      labels,
    };
    return recording;
  }
  const alerting: AlertingRule = {
    kind: 'alert',
    alert: rule.alert.text,
    expr: rule.expr.text,
    forMs: rule.forMs,
    keepFiringForMs: rule.keepFiringForMs,
    labels,
    annotations: Object.fromEntries(rule.annotations),
  };
  return alerting;
}

/**
 * Decodes YAML nodes into Go types as yaml.v3 does for rulefmt's structs: strict fields,
 * scalars into strings, ints that must be plain integers, `<<` merges and aliases resolved.
 * Type errors are collected (yaml.v3 goes on after one) in `errors`.
 */
class Decoder {
  readonly errors: string[] = [];
  /** An error that stops yaml.v3 at once (an Unmarshaler's, like a bad duration). */
  fatal: string | null = null;

  constructor(
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
  ) {}

  resolve(node: unknown): YamlNode | null {
    let current = node as YamlNode | null | undefined;
    for (
      let depth = 0;
      depth < 100 && current !== null && current !== undefined && isAlias(current);
      depth++
    ) {
      current = current.resolve(this.doc);
    }
    return current ?? null;
  }

  position(node: YamlNode | null): Position {
    const offset = node?.range?.[0];
    if (offset === undefined) return { line: 0, col: 0 };
    const { line, col } = this.lineCounter.linePos(offset);
    return { line, col };
  }

  private line(node: YamlNode | null): number {
    return this.position(node).line;
  }

  private tagOf(node: YamlNode): string {
    if (isMap(node)) return '!!map';
    if (isSeq(node)) return '!!seq';
    if (isScalar(node) && node.type === Scalar.PLAIN) {
      const value = String(node.value);
      if (/^[-+]?(0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|0o?[0-7_]+|0b[01_]+)$/.test(value)) return '!!int';
      if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(value)) return '!!float';
      if (/^(true|false|True|False|TRUE|FALSE)$/.test(value)) return '!!bool';
    }
    return '!!str';
  }

  private typeError(node: YamlNode, into: string): void {
    const text = isScalar(node) ? ` \`${String(node.value)}\`` : '';
    this.errors.push(
      `line ${this.line(node)}: cannot unmarshal ${this.tagOf(node)}${text} into ${into}`,
    );
  }

  /** A mapping's known fields (a duplicate key is a YAML error already). */
  struct(node: YamlNode | null, type: string, known: readonly string[]): Map<string, Decoded> {
    const fields = new Map<string, Decoded>();
    const resolved = this.resolve(node);
    if (resolved === null || isNullScalar(resolved)) return fields;
    if (!isMap(resolved)) {
      this.typeError(resolved, type);
      return fields;
    }
    for (const [key, value] of this.pairs(resolved)) {
      if (!known.includes(key.name)) {
        this.errors.push(`line ${key.line}: field ${key.name} not found in type ${type}`);
        continue;
      }
      const target = this.resolve(value);
      fields.set(key.name, { node: target, position: this.position(target) });
    }
    return fields;
  }

  /** A mapping's pairs in order, with `<<` merges expanded (explicit keys win). */
  private pairs(map: YamlNode): [{ name: string; line: number }, unknown][] {
    if (!isMap(map)) return [];
    const own: [{ name: string; line: number }, unknown][] = [];
    const merged: [{ name: string; line: number }, unknown][] = [];
    for (const pair of map.items) {
      const key = this.resolve(pair.key);
      const name =
        key !== null && isScalar(key)
          ? typeof key.value === 'symbol'
            ? '<<'
            : String(key.value)
          : '';
      if (isScalar(key) && typeof key.value === 'symbol') {
        const source = this.resolve(pair.value);
        const sources =
          source !== null && isSeq(source) ? source.items.map((i) => this.resolve(i)) : [source];
        for (const item of sources) if (item !== null) merged.push(...this.pairs(item));
        continue;
      }
      own.push([{ name, line: this.line(key) }, pair.value]);
    }
    const names = new Set(own.map(([key]) => key.name));
    return [...merged.filter(([key]) => !names.has(key.name)), ...own];
  }

  sequence(decoded: Decoded | null, type: string): Decoded[] {
    const node = decoded?.node ?? null;
    if (node === null || isNullScalar(node)) return [];
    if (!isSeq(node)) {
      this.typeError(node, type);
      return [];
    }
    // yaml.v3 leaves out a null entry of a sequence of structs.
    return node.items
      .map((item) => this.resolve(item))
      .filter((item) => item !== null && !isNullScalar(item))
      .map((item) => ({ node: item, position: this.position(item) }));
  }

  /** A scalar into a Go string: its text; null is "". */
  string(decoded: Decoded | null): string {
    const node = decoded?.node ?? null;
    if (node === null || isNullScalar(node)) return '';
    if (!isScalar(node)) {
      this.typeError(node, 'string');
      return '';
    }
    return String(node.value);
  }

  /** A yaml.Node field (record, alert, expr): a scalar's text, "" for anything else. */
  nodeText(decoded: Decoded | null): { text: string; at: Position | null } {
    const node = decoded?.node ?? null;
    if (node === null) return { text: '', at: null };
    const at = this.position(node);
    if (!isScalar(node) || isNullScalar(node)) return { text: '', at };
    return { text: String(node.value), at };
  }

  int(decoded: Decoded | null): number {
    const node = decoded?.node ?? null;
    if (node === null || isNullScalar(node)) return 0;
    const tag = this.tagOf(node);
    const text = isScalar(node) ? String(node.value).replace(/_/g, '') : '';
    if (tag === '!!int') {
      const negative = text.startsWith('-');
      const body = text.replace(/^[-+]/, '');
      const value = /^0[0-7]+$/.test(body) ? parseInt(body, 8) : Number(body.replace(/^0o/, '0o'));
      if (Number.isFinite(value)) return negative ? -value : value;
    }
    if (tag === '!!float' && Number.isInteger(Number(text))) return Number(text);
    this.typeError(node, 'int');
    return 0;
  }

  /** A model.Duration: a string parsed as a Prometheus duration; null leaves it unset. */
  duration(decoded: Decoded | null): number | undefined {
    const node = decoded?.node ?? null;
    if (node === null || isNullScalar(node)) return undefined;
    const text = this.string(decoded);
    if (!isScalar(node)) return undefined;
    try {
      return parsePrometheusDuration(text);
    } catch (error) {
      this.fatal ??= (error as Error).message;
      return undefined;
    }
  }

  stringMap(decoded: Decoded | null): Map<string, string> {
    const result = new Map<string, string>();
    const node = decoded?.node ?? null;
    if (node === null || isNullScalar(node)) return result;
    if (!isMap(node)) {
      this.typeError(node, 'map[string]string');
      return result;
    }
    for (const [key, value] of this.pairs(node)) {
      const resolved = this.resolve(value);
      result.set(key.name, this.string({ node: resolved, position: this.position(resolved) }));
    }
    return result;
  }
}
