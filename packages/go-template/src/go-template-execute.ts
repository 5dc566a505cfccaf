import type {
  ArgNode,
  CommandNode,
  ParsedTemplate,
  PipeNode,
  TemplateNode,
} from './go-template-parse.js';
import { nodeString } from './go-template-parse.js';
import { goSprintf } from './go-sprintf.js';
import type { GoValue } from './go-values.js';
import { formatGoValue, goTypeName, GoHtml, GoMap, GoStruct, isTrue } from './go-values.js';

/** The type of a function parameter: how an argument is checked and a literal converted. */
type ParamType = 'string' | 'float64' | 'int' | 'bool' | 'any';

/** A template function: its parameters (and variadic tail) and what it does. */
export type GoFunction = {
  params: readonly ParamType[];
  variadic?: ParamType;
  /** Throws an Error whose message Go would return as the function's error. */
  call(args: GoValue[]): GoValue | Promise<GoValue>;
};

/** A template that failed while running; the message is as close to Go's as cheaply possible. */
class TemplateExecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateExecError';
  }
}

/** `{{break}}` and `{{continue}}` unwind to their range as these. */
class Break extends Error {}
class Continue extends Error {}

type Variable = { name: string; value: GoValue };

/** Names of the functions Go's text/template always has. */
export const builtinFunctionNames = [
  'and',
  'or',
  'not',
  'len',
  'index',
  'slice',
  'print',
  'printf',
  'println',
  'html',
  'js',
  'urlquery',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'call',
] as const;

/** Runs a parsed template over `data` with Go's semantics (missingkey=zero), asynchronously. */
export async function executeGoTemplate(
  name: string,
  template: ParsedTemplate,
  data: GoValue,
  functions: ReadonlyMap<string, GoFunction>,
): Promise<string> {
  let out = '';
  /** Go's state.errorf: where (line and byte in line of `at`) and what it was running. */
  const fail = (message: string, at?: ArgNode | CommandNode): never => {
    if (at === undefined) throw new TemplateExecError(`template: ${name}: ${message}`);
    const before = template.text.slice(0, at.pos);
    const lineStart = before.lastIndexOf('\n') + 1;
    const line = 1 + (before.match(/\n/g)?.length ?? 0);
    const byte = Buffer.byteLength(before.slice(lineStart));
    throw new TemplateExecError(
      `template: ${name}:${line}:${byte}: executing "${name}" at <${nodeString(at)}>: ${message}`,
    );
  };

  async function walkList(dot: GoValue, list: readonly TemplateNode[], vars: Variable[]) {
    for (const node of list) await walk(dot, node, vars);
  }

  async function walk(dot: GoValue, node: TemplateNode, vars: Variable[]): Promise<void> {
    switch (node.kind) {
      case 'text':
        out += node.text;
        return;
      case 'action': {
        const value = await evalPipeline(dot, node.pipe, vars);
        if (node.pipe.decl.length === 0)
          out += value === null ? '<no value>' : formatGoValue(value);
        return;
      }
      case 'if':
      case 'with': {
        const mark = vars.length;
        const value = await evalPipeline(dot, node.pipe, vars);
        if (isTrue(value)) await walkList(node.kind === 'with' ? value : dot, node.list, vars);
        else if (node.elseList !== null) await walkList(dot, node.elseList, vars);
        vars.length = mark;
        return;
      }
      case 'range': {
        const mark = vars.length;
        const value = await evalPipeline(dot, node.pipe, vars);
        const items = rangeItems(value);
        if (items.length === 0 && node.elseList !== null) await walkList(dot, node.elseList, vars);
        for (const [key, element] of items) {
          const inner = vars.length;
          if (node.pipe.decl.length === 1) vars.push({ name: node.pipe.decl[0]!, value: element });
          if (node.pipe.decl.length === 2) {
            vars.push({ name: node.pipe.decl[0]!, value: key });
            vars.push({ name: node.pipe.decl[1]!, value: element });
          }
          try {
            await walkList(element, node.list, vars);
          } catch (signal) {
            if (signal instanceof Break) break;
            if (!(signal instanceof Continue)) throw signal;
          } finally {
            vars.length = inner;
          }
        }
        vars.length = mark;
        return;
      }
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
      case 'template': {
        const body = template.definitions.get(node.name);
        if (body === undefined) fail(`no such template ${JSON.stringify(node.name)}`);
        const value = node.pipe === null ? null : await evalPipeline(dot, node.pipe, vars);
        await walkList(value, body!, [{ name: '$', value }]);
        return;
      }
    }
  }

  function rangeItems(value: GoValue): [GoValue, GoValue][] {
    if (value === null) return [];
    if (Array.isArray(value)) {
      return (value as readonly GoValue[]).map((element, i) => [BigInt(i), element]);
    }
    if (value instanceof GoMap) {
      return [...value.entries.keys()].sort().map((key) => [key, value.entries.get(key)!]);
    }
    return fail(`range can't iterate over ${formatGoValue(value)}`);
  }

  async function evalPipeline(dot: GoValue, pipe: PipeNode, vars: Variable[]): Promise<GoValue> {
    let value: GoValue | undefined;
    for (const cmd of pipe.cmds) value = await evalCommand(dot, cmd, vars, value);
    const result = value ?? null;
    for (const name of pipe.decl) {
      if (pipe.isAssign) {
        const variable = vars.findLast((v) => v.name === name);
        if (variable === undefined) fail(`undefined variable: ${name}`);
        variable!.value = result;
      } else {
        vars.push({ name, value: result });
      }
    }
    return result;
  }

  async function evalCommand(
    dot: GoValue,
    cmd: CommandNode,
    vars: Variable[],
    final: GoValue | undefined,
  ): Promise<GoValue> {
    const [first, ...rest] = cmd.args as [ArgNode, ...ArgNode[]];
    const hasArgs = rest.length > 0 || final !== undefined;
    switch (first.kind) {
      case 'identifier':
        return callFunction(first.name, dot, rest, vars, final, first, cmd);
      case 'field':
      case 'variable':
      case 'chain':
        if (hasArgs) fail(`${describe(first)} is not a method but has arguments`, first);
        return evalArg(dot, first, vars);
      case 'pipe':
        if (hasArgs) fail("can't give argument to non-function", first);
        return evalArg(dot, first, vars);
      case 'nil':
        return fail('nil is not a command', first);
      default:
        if (hasArgs) fail(`can't give argument to non-function ${describe(first)}`, first);
        return evalArg(dot, first, vars);
    }
  }

  async function evalArg(dot: GoValue, node: ArgNode, vars: Variable[]): Promise<GoValue> {
    switch (node.kind) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'bool':
        return node.value;
      case 'string':
        return node.value;
      case 'number':
        return node.isFloat ? node.value : BigInt(node.value);
      case 'field':
        return fields(dot, node.names, node);
      case 'variable': {
        const [variableName, ...names] = node.names;
        const variable = vars.findLast((v) => v.name === variableName);
        if (variable === undefined) return fail(`undefined variable: ${variableName}`, node);
        return fields(variable.value, names, node);
      }
      case 'chain':
        return fields(await evalArg(dot, node.node, vars), node.fields, node);
      case 'pipe':
        return evalPipeline(dot, node.pipe, [...vars]);
      case 'identifier':
        return callFunction(node.name, dot, [], vars, undefined, node, node);
    }
  }

  function fields(value: GoValue, names: readonly string[], at: ArgNode): GoValue {
    let current = value;
    for (const field of names) {
      if (current instanceof GoMap) {
        current = current.entries.get(field) ?? current.zero;
      } else if (current instanceof GoStruct && field in current.fields) {
        current = current.fields[field]!;
      } else if (current === null) {
        return fail(`nil pointer evaluating interface {}.${field}`, at);
      } else {
        return fail(`can't evaluate field ${field} in type ${goTypeName(current)}`, at);
      }
    }
    return current;
  }

  async function callFunction(
    functionName: string,
    dot: GoValue,
    argNodes: readonly ArgNode[],
    vars: Variable[],
    final: GoValue | undefined,
    identifier: ArgNode,
    call: ArgNode | CommandNode,
  ): Promise<GoValue> {
    // and/or evaluate their arguments only as far as needed (Go 1.18+).
    if (functionName === 'and' || functionName === 'or') {
      if (argNodes.length + (final === undefined ? 0 : 1) < 1) {
        fail(`wrong number of args for ${functionName}: want at least 1 got 0`, identifier);
      }
      let value: GoValue = null;
      for (const node of argNodes) {
        value = await evalArg(dot, node, vars);
        if (isTrue(value) === (functionName === 'or')) return value;
      }
      return final === undefined ? value : final;
    }
    const fn = functions.get(functionName);
    if (fn === undefined) {
      return fail(`${JSON.stringify(functionName)} is not a defined function`, identifier);
    }
    const count = argNodes.length + (final === undefined ? 0 : 1);
    const fixed = fn.params.length;
    if (fn.variadic === undefined ? count !== fixed : count < fixed) {
      fail(
        `wrong number of args for ${functionName}: want ${fn.variadic === undefined ? '' : 'at least '}${fixed} got ${count}`,
        identifier,
      );
    }
    const args: GoValue[] = [];
    for (let i = 0; i < count; i++) {
      const type = fn.params[i] ?? fn.variadic ?? 'any';
      const node = argNodes[i];
      const raw = node === undefined ? final! : await evalArg(dot, node, vars);
      args.push(convertArg(raw, type, node, node ?? call));
    }
    try {
      return await fn.call(args);
    } catch (error) {
      if (error instanceof TemplateExecError) throw error;
      return fail(`error calling ${functionName}: ${(error as Error).message}`, call);
    }
  }

  function convertArg(
    value: GoValue,
    type: ParamType,
    node: ArgNode | undefined,
    at: ArgNode | CommandNode,
  ): GoValue {
    const wrong = (): never => {
      // Go checks a literal against the parameter before it has a value.
      if (node !== undefined && ['number', 'bool', 'string', 'nil'].includes(node.kind)) {
        return fail(`expected ${type}; found ${nodeString(node)}`, node);
      }
      return fail(`wrong type for value; expected ${type}; got ${goTypeName(value)}`, at);
    };
    switch (type) {
      case 'any':
        return value;
      case 'string':
        if (value instanceof GoHtml) return value.value;
        return typeof value === 'string' ? value : wrong();
      case 'float64':
        // An untyped number constant converts; a typed int does not.
        if (node?.kind === 'number') return node.value;
        return typeof value === 'number' ? value : wrong();
      case 'int':
        if (node?.kind === 'number' && Number.isInteger(node.value)) return BigInt(node.value);
        return typeof value === 'bigint' ? value : wrong();
      case 'bool':
        return typeof value === 'boolean' ? value : wrong();
    }
  }

  await walkList(data, template.root, [{ name: '$', value: data }]);
  return out;
}

function describe(node: ArgNode): string {
  switch (node.kind) {
    case 'field':
      return `.${node.names.join('.')}`;
    case 'variable':
      return node.names.join('.');
    case 'number':
      return node.text;
    case 'string':
      return JSON.stringify(node.value);
    case 'bool':
      return String(node.value);
    default:
      return node.kind;
  }
}

/** The functions every Go template has, but and/or, which the executor evaluates lazily. */
export function builtinFunctions(): Map<string, GoFunction> {
  const fns = new Map<string, GoFunction>();
  // Go 1.19 derives the orderings from lt and eq: le = lt || eq, gt = !le, ge = !lt, so with
  // a NaN `gt` and `ge` are true.
  const lt = (a: GoValue, b: GoValue): boolean => compareBasic(a, b, false) < 0;
  const eq = (a: GoValue, b: GoValue): boolean => compareBasic(a, b, true) === 0;
  const le = (a: GoValue, b: GoValue): boolean => lt(a, b) || eq(a, b);
  const ordering = (test: (a: GoValue, b: GoValue) => boolean): GoFunction => ({
    params: ['any', 'any'],
    call: ([a, b]) => test(a!, b!),
  });
  fns.set('eq', {
    params: ['any'],
    variadic: 'any',
    call([first, ...others]) {
      if (others.length === 0) throw new Error('missing argument for comparison');
      return others.some((other) => eq(first!, other));
    },
  });
  fns.set(
    'ne',
    ordering((a, b) => !eq(a, b)),
  );
  fns.set('lt', ordering(lt));
  fns.set('le', ordering(le));
  fns.set(
    'gt',
    ordering((a, b) => !le(a, b)),
  );
  fns.set(
    'ge',
    ordering((a, b) => !lt(a, b)),
  );
  fns.set('not', { params: ['any'], call: ([v]) => !isTrue(v!) });
  fns.set('len', {
    params: ['any'],
    call([v]) {
      if (typeof v === 'string') return BigInt(Buffer.byteLength(v));
      if (Array.isArray(v)) return BigInt(v.length);
      if (v instanceof GoMap) return BigInt(v.entries.size);
      throw new Error(`len of type ${goTypeName(v!)}`);
    },
  });
  fns.set('index', {
    params: ['any'],
    variadic: 'any',
    call([item, ...keys]) {
      let current: GoValue = item!;
      for (const key of keys) {
        if (current instanceof GoMap) {
          if (typeof key !== 'string') throw new Error('value has type int; should be string');
          current = current.entries.get(key) ?? current.zero;
        } else if (Array.isArray(current) || typeof current === 'string') {
          if (typeof key !== 'bigint') throw new Error('cannot index slice/array with type string');
          const list = current as readonly GoValue[] | string;
          if (key < 0n || key >= BigInt(list.length)) {
            throw new Error(`index out of range: ${key}`);
          }
          current =
            typeof list === 'string' ? BigInt(Buffer.from(list)[Number(key)]!) : list[Number(key)]!;
        } else {
          throw new Error(`can't index item of type ${goTypeName(current)}`);
        }
      }
      return current;
    },
  });
  fns.set('slice', {
    params: ['any'],
    variadic: 'int',
    call([item, ...bounds]) {
      if (typeof item !== 'string' && !Array.isArray(item)) {
        throw new Error(`can't slice item of type ${goTypeName(item!)}`);
      }
      const list = item as string | readonly GoValue[];
      const [from = 0n, to = BigInt(list.length)] = bounds as bigint[];
      if (from < 0n || to > BigInt(list.length) || from > to) {
        throw new Error(`index out of range: ${from}`);
      }
      return typeof list === 'string'
        ? Buffer.from(list).subarray(Number(from), Number(to)).toString()
        : list.slice(Number(from), Number(to));
    },
  });
  fns.set('print', { params: [], variadic: 'any', call: (args) => goSprint(args) });
  fns.set('println', {
    params: [],
    variadic: 'any',
    call: (args) => `${args.map(formatGoValue).join(' ')}\n`,
  });
  fns.set('printf', {
    params: ['string'],
    variadic: 'any',
    call: ([format, ...args]) => goSprintf(format as string, args),
  });
  fns.set('html', { params: [], variadic: 'any', call: (args) => escapeHtml(evalArgsText(args)) });
  fns.set('js', { params: [], variadic: 'any', call: (args) => escapeJs(evalArgsText(args)) });
  fns.set('urlquery', {
    params: [],
    variadic: 'any',
    call: (args) => goQueryEscape(evalArgsText(args)),
  });
  fns.set('call', {
    params: ['any'],
    variadic: 'any',
    call() {
      throw new Error('call of a non-function');
    },
  });
  return fns;
}

/** fmt.Sprint: a space between operands when neither is a string. */
function goSprint(args: readonly GoValue[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatGoValue(arg);
  });
  return out;
}

function evalArgsText(args: readonly GoValue[]): string {
  return args.length === 1 && typeof args[0] === 'string' ? args[0] : goSprint(args);
}

function escapeHtml(text: string): string {
  return text.replace(/[<>&'"\0]/g, (c) =>
    c === '<'
      ? '&lt;'
      : c === '>'
        ? '&gt;'
        : c === '&'
          ? '&amp;'
          : c === "'"
            ? '&#39;'
            : c === '"'
              ? '&#34;'
              : '\uFFFD',
  );
}

function escapeJs(text: string): string {
  // eslint-disable-next-line no-control-regex -- Go's JSEscape escapes control characters too
  return text.replace(/[\\'"<>&=]|[\x00-\x1f]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === "'") return "\\'";
    if (c === '"') return '\\"';
    return `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

/** Go's url.QueryEscape: spaces as `+`, everything but unreserved characters %XX-escaped. */
export function goQueryEscape(text: string): string {
  return [...Buffer.from(text)]
    .map((byte) => {
      const c = String.fromCharCode(byte);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** Go 1.19's eq/lt on basic kinds: an int and a float do not compare. */
function compareBasic(a: GoValue, b: GoValue, equality: boolean): number {
  const kind = (v: GoValue): string =>
    v instanceof GoHtml
      ? 'string'
      : v === null
        ? 'nil'
        : typeof v === 'object'
          ? 'other'
          : typeof v;
  const ka = kind(a);
  const kb = kind(b);
  if (ka !== kb) {
    if (equality && (ka === 'nil' || kb === 'nil')) return 1;
    throw new Error('incompatible types for comparison');
  }
  if (ka === 'other' || ka === 'nil') {
    if (equality) throw new Error(`non-comparable types`);
    throw new Error('invalid type for comparison');
  }
  if (ka === 'boolean') {
    if (!equality) throw new Error('invalid type for comparison');
    return a === b ? 0 : 1;
  }
  const x = a instanceof GoHtml ? a.value : (a as string | number | bigint);
  const y = b instanceof GoHtml ? b.value : (b as string | number | bigint);
  if (x === y) return 0;
  if (ka === 'number' && (Number.isNaN(x) || Number.isNaN(y))) return NaN;
  return x < y ? -1 : 1;
}
