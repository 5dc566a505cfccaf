import type { ParamType } from './go-function.js';
import type { GoValue } from './go-values.js';
import { goTypeName, GoHtml, GoMap, GoStruct, isTrue } from './go-values.js';
import type { ExecContext, Variable } from './exec-context.js';
import { TemplateExecError } from './exec-context.js';
import type { ArgNode, CommandNode, PipeNode } from './template-nodes.js';
import { nodeString } from './template-nodes.js';

// A pipeline's value, as Go's exec.go evaluates it: commands, their operands (fields,
// variables, literals, nested pipelines) and function calls with Go's argument checks.

export async function evaluatePipeline(
  ctx: ExecContext,
  dot: GoValue,
  pipe: PipeNode,
  vars: Variable[],
): Promise<GoValue> {
  let value: GoValue | undefined;
  for (const cmd of pipe.cmds) value = await evalCommand(ctx, dot, cmd, vars, value);
  const result = value ?? null;
  for (const name of pipe.decl) {
    if (pipe.isAssign) {
      const variable = vars.findLast((v) => v.name === name);
      if (variable === undefined) ctx.fail(`undefined variable: ${name}`);
      variable.value = result;
    } else {
      vars.push({ name, value: result });
    }
  }
  return result;
}

async function evalCommand(
  ctx: ExecContext,
  dot: GoValue,
  cmd: CommandNode,
  vars: Variable[],
  final: GoValue | undefined,
): Promise<GoValue> {
  const [first, ...rest] = cmd.args as [ArgNode, ...ArgNode[]];
  const hasArgs = rest.length > 0 || final !== undefined;
  switch (first.kind) {
    case 'identifier':
      return callFunction(ctx, first.name, dot, rest, vars, final, first, cmd);
    case 'field':
    case 'variable':
    case 'chain':
      if (hasArgs) ctx.fail(`${describe(first)} is not a method but has arguments`, first);
      return evalArg(ctx, dot, first, vars);
    case 'pipe':
      if (hasArgs) ctx.fail("can't give argument to non-function", first);
      return evalArg(ctx, dot, first, vars);
    case 'nil':
      return ctx.fail('nil is not a command', first);
    default:
      if (hasArgs) ctx.fail(`can't give argument to non-function ${describe(first)}`, first);
      return evalArg(ctx, dot, first, vars);
  }
}

async function evalArg(
  ctx: ExecContext,
  dot: GoValue,
  node: ArgNode,
  vars: Variable[],
): Promise<GoValue> {
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
      return fields(ctx, dot, node.names, node);
    case 'variable': {
      const [variableName, ...names] = node.names;
      const variable = vars.findLast((v) => v.name === variableName);
      if (variable === undefined) return ctx.fail(`undefined variable: ${variableName}`, node);
      return fields(ctx, variable.value, names, node);
    }
    case 'chain':
      return fields(ctx, await evalArg(ctx, dot, node.node, vars), node.fields, node);
    case 'pipe':
      return evaluatePipeline(ctx, dot, node.pipe, [...vars]);
    case 'identifier':
      return callFunction(ctx, node.name, dot, [], vars, undefined, node, node);
  }
}

function fields(ctx: ExecContext, value: GoValue, names: readonly string[], at: ArgNode): GoValue {
  let current = value;
  for (const field of names) {
    if (current instanceof GoMap) {
      current = current.entries.get(field) ?? current.zero;
    } else if (current instanceof GoStruct && field in current.fields) {
      current = current.fields[field]!;
    } else if (current === null) {
      return ctx.fail(`nil pointer evaluating interface {}.${field}`, at);
    } else {
      return ctx.fail(`can't evaluate field ${field} in type ${goTypeName(current)}`, at);
    }
  }
  return current;
}

async function callFunction(
  ctx: ExecContext,
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
      ctx.fail(`wrong number of args for ${functionName}: want at least 1 got 0`, identifier);
    }
    let value: GoValue = null;
    for (const node of argNodes) {
      value = await evalArg(ctx, dot, node, vars);
      if (isTrue(value) === (functionName === 'or')) return value;
    }
    return final === undefined ? value : final;
  }
  const fn = ctx.functions.get(functionName);
  if (fn === undefined) {
    return ctx.fail(`${JSON.stringify(functionName)} is not a defined function`, identifier);
  }
  const count = argNodes.length + (final === undefined ? 0 : 1);
  const fixed = fn.params.length;
  if (fn.variadic === undefined ? count !== fixed : count < fixed) {
    ctx.fail(
      `wrong number of args for ${functionName}: want ${fn.variadic === undefined ? '' : 'at least '}${fixed} got ${count}`,
      identifier,
    );
  }
  const args: GoValue[] = [];
  for (let i = 0; i < count; i++) {
    const type = fn.params[i] ?? fn.variadic ?? 'any';
    const node = argNodes[i];
    const raw = node === undefined ? final! : await evalArg(ctx, dot, node, vars);
    args.push(convertArg(ctx, raw, type, node, node ?? call));
  }
  try {
    return await fn.call(args);
  } catch (error) {
    if (error instanceof TemplateExecError) throw error;
    return ctx.fail(`error calling ${functionName}: ${(error as Error).message}`, call);
  }
}

function convertArg(
  ctx: ExecContext,
  value: GoValue,
  type: ParamType,
  node: ArgNode | undefined,
  at: ArgNode | CommandNode,
): GoValue {
  const wrong = (): never => {
    // Go checks a literal against the parameter before it has a value.
    if (node !== undefined && ['number', 'bool', 'string', 'nil'].includes(node.kind)) {
      return ctx.fail(`expected ${type}; found ${nodeString(node)}`, node);
    }
    return ctx.fail(`wrong type for value; expected ${type}; got ${goTypeName(value)}`, at);
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
