import type { Token, TokenType } from './template-scanner.js';
import { parseGoNumberLiteral } from './go-number-literal.js';
import type { ParseState } from './parse-state.js';
import type { ArgNode, CommandNode, PipeNode } from './template-nodes.js';

/**
 * A pipeline up to the `end` token, as Go's Tree.pipeline: its declarations (`$x :=`, `$x =`,
 * `$i, $e :=` in a range), which come into scope here, then its commands.
 */
export function parsePipeline(state: ParseState, context: string, end: TokenType): PipeNode {
  const pipe: PipeNode = { decl: [], isAssign: false, cmds: [] };
  for (;;) {
    const v = state.peekNonSpace();
    if (v.type !== 'variable') break;
    const start = state.index;
    state.nextNonSpace();
    const after = state.peekNonSpace();
    if (after.type === 'assign' || after.type === 'declare') {
      pipe.isAssign = after.type === 'assign';
      state.nextNonSpace();
      pipe.decl.push(v.value);
      state.vars.push(v.value);
      break;
    }
    if (after.type === 'char' && after.value === ',') {
      state.nextNonSpace();
      pipe.decl.push(v.value);
      state.vars.push(v.value);
      if (context === 'range' && pipe.decl.length < 2) {
        const following = state.peekNonSpace().type;
        if (following === 'variable' || following === 'rightDelim' || following === 'rightParen') {
          continue;
        }
        state.fail('range can only initialize variables');
      }
      state.fail(`too many declarations in ${context}`);
    }
    state.index = start;
    break;
  }
  for (;;) {
    const token = state.nextNonSpace();
    if (token.type === end) {
      checkPipeline(state, pipe, context);
      return pipe;
    }
    switch (token.type) {
      case 'bool':
      case 'charConstant':
      case 'dot':
      case 'field':
      case 'identifier':
      case 'number':
      case 'nil':
      case 'rawString':
      case 'string':
      case 'variable':
      case 'leftParen':
        state.backup();
        pipe.cmds.push(command(state));
        break;
      default:
        state.unexpected(token, context);
    }
  }
}

function checkPipeline(state: ParseState, pipe: PipeNode, context: string): void {
  if (pipe.cmds.length === 0) state.fail(`missing value for ${context}`);
  pipe.cmds.slice(1).forEach((cmd, i) => {
    const first = cmd.args[0]!;
    if (['bool', 'dot', 'nil', 'number', 'string'].includes(first.kind)) {
      state.fail(`non executable command in pipeline stage ${i + 2}`);
    }
  });
}

function command(state: ParseState): CommandNode {
  const cmd: CommandNode = { args: [], pos: state.peekNonSpace().pos };
  for (;;) {
    state.peekNonSpace();
    const arg = operand(state);
    if (arg !== null) cmd.args.push(arg);
    const token = state.next();
    if (token.type === 'space') continue;
    if (token.type === 'rightDelim' || token.type === 'rightParen') state.backup();
    else if (token.type !== 'pipe') state.unexpected(token, 'operand');
    break;
  }
  if (cmd.args.length === 0) state.fail('empty command');
  return cmd;
}

function operand(state: ParseState): ArgNode | null {
  const node = term(state);
  if (node === null) return null;
  if (state.peek().type !== 'field') return node;
  const pos = node.pos;
  const fields: string[] = [];
  while (state.peek().type === 'field') fields.push(state.next().value.slice(1));
  switch (node.kind) {
    case 'field':
      return { kind: 'field', names: [...node.names, ...fields], pos };
    case 'variable':
      return { kind: 'variable', names: [...node.names, ...fields], pos };
    case 'bool':
    case 'string':
    case 'number':
    case 'nil':
    case 'dot':
      return state.fail(`unexpected . after term ${JSON.stringify(describeArg(node))}`);
    default:
      return { kind: 'chain', node, fields, pos };
  }
}

function term(state: ParseState): ArgNode | null {
  const token = state.nextNonSpace();
  switch (token.type) {
    case 'identifier':
      if (!state.functions.has(token.value))
        state.fail(`function ${JSON.stringify(token.value)} not defined`);
      return { kind: 'identifier', name: token.value, pos: token.pos };
    case 'dot':
      return { kind: 'dot', pos: token.pos };
    case 'nil':
      return { kind: 'nil', pos: token.pos };
    case 'variable': {
      const [variable, ...fields] = token.value.split('.');
      if (!state.vars.includes(variable!)) {
        state.fail(`undefined variable ${JSON.stringify(variable)}`);
      }
      return { kind: 'variable', names: [variable!, ...fields], pos: token.pos };
    }
    case 'field':
      return { kind: 'field', names: token.value.slice(1).split('.'), pos: token.pos };
    case 'bool':
      return { kind: 'bool', value: token.value === 'true', pos: token.pos };
    case 'charConstant':
    case 'number':
      return number(state, token);
    case 'leftParen':
      return {
        kind: 'pipe',
        pipe: parsePipeline(state, 'parenthesized pipeline', 'rightParen'),
        pos: token.pos,
      };
    case 'string':
    case 'rawString':
      return { kind: 'string', value: state.unquote(token), quoted: token.value, pos: token.pos };
  }
  state.backup();
  return null;
}

function number(state: ParseState, token: Token): ArgNode {
  const text = token.value;
  if (token.type === 'charConstant') {
    const rune = state.unquote({ ...token, value: `"${text.slice(1, -1).replace(/"/g, '\\"')}"` });
    if ([...rune].length !== 1) state.fail(`malformed character constant: ${text}`);
    return { kind: 'number', text, isFloat: false, value: rune.codePointAt(0)!, pos: token.pos };
  }
  if (text.endsWith('i')) return state.fail(`complex numbers are not supported: ${text}`);
  const value = parseGoNumberLiteral(text);
  if (value === null) return state.fail(`illegal number syntax: ${JSON.stringify(text)}`);
  const isHex = /^[+-]?0[xX]/.test(text);
  const isFloat = isHex ? /[pP.]/.test(text) : /[.eEpP]/.test(text);
  if (!isFloat && !Number.isSafeInteger(value) && Math.abs(value) > 2 ** 63) {
    state.fail(`integer overflow: ${JSON.stringify(text)}`);
  }
  return { kind: 'number', text, isFloat, value, pos: token.pos };
}

function describeArg(node: ArgNode): string {
  switch (node.kind) {
    case 'bool':
      return String(node.value);
    case 'string':
      return JSON.stringify(node.value);
    case 'number':
      return node.text;
    case 'nil':
      return 'nil';
    default:
      return '.';
  }
}
