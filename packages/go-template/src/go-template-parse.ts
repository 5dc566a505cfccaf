import { unquoteGoString } from './go-string-literal.js';
import type { Token, TokenType } from './go-template-lexer.js';
import { lexGoTemplate } from './go-template-lexer.js';

/** An operand of a command, as Go's parse package builds it; `pos` is its offset in the text. */
export type ArgNode = { pos: number } & (
  | { kind: 'field'; names: string[] }
  | { kind: 'variable'; names: string[] }
  | { kind: 'dot' }
  | { kind: 'nil' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number'; text: string; isFloat: boolean; value: number }
  | { kind: 'string'; value: string; quoted: string }
  | { kind: 'identifier'; name: string }
  | { kind: 'chain'; node: ArgNode; fields: string[] }
  | { kind: 'pipe'; pipe: PipeNode }
);

export type CommandNode = { args: ArgNode[]; pos: number };
export type PipeNode = { decl: string[]; isAssign: boolean; cmds: CommandNode[] };

export type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: PipeNode }
  | {
      kind: 'if' | 'range' | 'with';
      pipe: PipeNode;
      list: TemplateNode[];
      elseList: TemplateNode[] | null;
    }
  | { kind: 'template'; name: string; pipe: PipeNode | null }
  | { kind: 'break' }
  | { kind: 'continue' };

/** A parsed template: its text, its body and the templates it `define`s (or `block`s). */
export type ParsedTemplate = {
  text: string;
  root: TemplateNode[];
  definitions: Map<string, TemplateNode[]>;
};

/** A template that Go's parser refuses; the message is Go's (`template: NAME:LINE: …`). */
export class TemplateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateParseError';
  }
}

type Terminator = { kind: 'end' } | { kind: 'else'; elseIf: boolean };

/**
 * Parses `text` as Go's text/template does (Go 1.19): every function named must be in
 * `functions`, every variable declared in scope, `{{break}}`/`{{continue}}` only in a range.
 * Throws TemplateParseError with Go's message.
 */
export function parseGoTemplate(
  name: string,
  text: string,
  functions: ReadonlySet<string>,
): ParsedTemplate {
  const tokens = lexGoTemplate(text);
  let index = 0;
  let vars: string[] = ['$'];
  let rangeDepth = 0;
  let actionLine = 0;
  const definitions = new Map<string, TemplateNode[]>();

  const fail = (message: string, line = tokens[Math.max(0, index - 1)]?.line ?? 1): never => {
    throw new TemplateParseError(`template: ${name}:${line}: ${message}`);
  };
  const next = (): Token => tokens[Math.min(index++, tokens.length - 1)]!;
  const backup = (): void => {
    index--;
  };
  const peek = (): Token => tokens[Math.min(index, tokens.length - 1)]!;
  const nextNonSpace = (): Token => {
    let token = next();
    while (token.type === 'space') token = next();
    return token;
  };
  const peekNonSpace = (): Token => {
    const token = nextNonSpace();
    backup();
    return token;
  };
  const describe = (token: Token): string => {
    if (token.type === 'eof') return 'EOF';
    if (token.type === 'error') return token.value;
    if (token.type === 'keyword') return `<${token.value}>`;
    if (token.value.length > 10) return `${JSON.stringify(token.value.slice(0, 10))}...`;
    return JSON.stringify(token.value);
  };
  const unexpected = (token: Token, context: string): never => {
    if (token.type === 'error') {
      const extra =
        actionLine !== 0 && actionLine !== token.line
          ? ` in action started at ${name}:${actionLine}`
          : '';
      return fail(`${token.value}${extra}`, token.line);
    }
    return fail(`unexpected ${describe(token)} in ${context}`, token.line);
  };
  const expect = (type: TokenType, context: string): Token => {
    const token = nextNonSpace();
    if (token.type !== type) unexpected(token, context);
    return token;
  };

  function itemList(): { list: TemplateNode[]; terminator: Terminator } {
    const list: TemplateNode[] = [];
    while (peekNonSpace().type !== 'eof') {
      const node = textOrAction();
      if (node !== null && 'terminator' in node) return { list, terminator: node.terminator };
      if (node !== null) list.push(node);
    }
    return fail('unexpected EOF');
  }

  function textOrAction(): TemplateNode | { terminator: Terminator } | null {
    const token = nextNonSpace();
    switch (token.type) {
      case 'text':
        return { kind: 'text', text: token.value };
      case 'leftDelim':
        actionLine = token.line;
        try {
          return action();
        } finally {
          actionLine = 0;
        }
      case 'comment':
        return null;
      default:
        return unexpected(token, 'input');
    }
  }

  function action(): TemplateNode | { terminator: Terminator } | null {
    const token = nextNonSpace();
    if (token.type === 'comment') {
      expect('rightDelim', 'comment');
      return null;
    }
    if (token.type === 'keyword') {
      switch (token.value) {
        case 'block':
          return blockControl();
        case 'break':
        case 'continue': {
          const after = nextNonSpace();
          if (after.type !== 'rightDelim') unexpected(after, `in {{${token.value}}}`);
          if (rangeDepth === 0) fail(`{{${token.value}}} outside {{range}}`);
          return { kind: token.value };
        }
        case 'else': {
          if (peekNonSpace().type === 'keyword' && peekNonSpace().value === 'if') {
            return { terminator: { kind: 'else', elseIf: true } };
          }
          expect('rightDelim', 'else');
          return { terminator: { kind: 'else', elseIf: false } };
        }
        case 'end':
          expect('rightDelim', 'end');
          return { terminator: { kind: 'end' } };
        case 'if':
          return control('if', true);
        case 'range':
          return control('range', false);
        case 'with':
          return control('with', false);
        case 'template':
          return templateControl('template');
        case 'define':
          return fail('unexpected <define> in command');
      }
    }
    backup();
    // Variables declared in a plain action stay until the enclosing {{end}}.
    return { kind: 'action', pipe: pipeline('command', 'rightDelim') };
  }

  function control(kind: 'if' | 'range' | 'with', allowElseIf: boolean): TemplateNode {
    const saved = vars.length;
    try {
      const pipe = pipeline(kind, 'rightDelim');
      if (kind === 'range') rangeDepth++;
      const body = itemList();
      if (kind === 'range') rangeDepth--;
      let elseList: TemplateNode[] | null = null;
      if (body.terminator.kind === 'else') {
        if (allowElseIf && body.terminator.elseIf) {
          nextNonSpace(); // the `if` of `{{else if …}}`: one {{end}} closes both
          elseList = [control('if', true)];
        } else {
          if (body.terminator.elseIf) {
            // `{{else if}}` inside range/with: Go reads the `if` as an unexpected token.
            unexpected(nextNonSpace(), 'input');
          }
          const rest = itemList();
          if (rest.terminator.kind !== 'end') fail('expected end; found {{else}}');
          elseList = rest.list;
        }
      }
      return { kind, pipe, list: body.list, elseList };
    } finally {
      vars = vars.slice(0, saved);
    }
  }

  function templateName(token: Token, context: string): string {
    if (token.type === 'string' || token.type === 'rawString') return unquote(token);
    return unexpected(token, context);
  }

  function templateControl(context: string): TemplateNode {
    const templateNameToken = nextNonSpace();
    const templateNameValue = templateName(templateNameToken, context);
    let pipe: PipeNode | null = null;
    if (nextNonSpace().type !== 'rightDelim') {
      backup();
      pipe = pipeline(context, 'rightDelim');
    }
    return { kind: 'template', name: templateNameValue, pipe };
  }

  function blockControl(): TemplateNode {
    const nameToken = nextNonSpace();
    const blockName = templateName(nameToken, 'block clause');
    const pipe = pipeline('block clause', 'rightDelim');
    definition(blockName);
    return { kind: 'template', name: blockName, pipe };
  }

  /** A `define`d body: its own variable scope, ending at {{end}}. */
  function definition(definedName: string): void {
    const savedVars = vars;
    const savedDepth = rangeDepth;
    vars = ['$'];
    rangeDepth = 0;
    const body = itemList();
    if (body.terminator.kind !== 'end') fail('unexpected {{else}}');
    definitions.set(definedName, body.list);
    vars = savedVars;
    rangeDepth = savedDepth;
  }

  function pipeline(context: string, end: TokenType): PipeNode {
    const pipe: PipeNode = { decl: [], isAssign: false, cmds: [] };
    for (;;) {
      const v = peekNonSpace();
      if (v.type !== 'variable') break;
      const start = index;
      nextNonSpace();
      const after = peekNonSpace();
      if (after.type === 'assign' || after.type === 'declare') {
        pipe.isAssign = after.type === 'assign';
        nextNonSpace();
        pipe.decl.push(v.value);
        vars.push(v.value);
        break;
      }
      if (after.type === 'char' && after.value === ',') {
        nextNonSpace();
        pipe.decl.push(v.value);
        vars.push(v.value);
        if (context === 'range' && pipe.decl.length < 2) {
          const following = peekNonSpace().type;
          if (
            following === 'variable' ||
            following === 'rightDelim' ||
            following === 'rightParen'
          ) {
            continue;
          }
          fail('range can only initialize variables');
        }
        fail(`too many declarations in ${context}`);
      }
      index = start;
      break;
    }
    for (;;) {
      const token = nextNonSpace();
      if (token.type === end) {
        checkPipeline(pipe, context);
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
          backup();
          pipe.cmds.push(command());
          break;
        default:
          unexpected(token, context);
      }
    }
  }

  function checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) fail(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((cmd, i) => {
      const first = cmd.args[0]!;
      if (['bool', 'dot', 'nil', 'number', 'string'].includes(first.kind)) {
        fail(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  function command(): CommandNode {
    const cmd: CommandNode = { args: [], pos: peekNonSpace().pos };
    for (;;) {
      peekNonSpace();
      const arg = operand();
      if (arg !== null) cmd.args.push(arg);
      const token = next();
      if (token.type === 'space') continue;
      if (token.type === 'rightDelim' || token.type === 'rightParen') backup();
      else if (token.type !== 'pipe') unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) fail('empty command');
    return cmd;
  }

  function operand(): ArgNode | null {
    const node = term();
    if (node === null) return null;
    if (peek().type !== 'field') return node;
    const pos = node.pos;
    const fields: string[] = [];
    while (peek().type === 'field') fields.push(next().value.slice(1));
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
        return fail(`unexpected . after term ${JSON.stringify(describeArg(node))}`);
      default:
        return { kind: 'chain', node, fields, pos };
    }
  }

  function term(): ArgNode | null {
    const token = nextNonSpace();
    switch (token.type) {
      case 'identifier':
        if (!functions.has(token.value))
          fail(`function ${JSON.stringify(token.value)} not defined`);
        return { kind: 'identifier', name: token.value, pos: token.pos };
      case 'dot':
        return { kind: 'dot', pos: token.pos };
      case 'nil':
        return { kind: 'nil', pos: token.pos };
      case 'variable': {
        const [variable, ...fields] = token.value.split('.');
        if (!vars.includes(variable!)) fail(`undefined variable ${JSON.stringify(variable)}`);
        return { kind: 'variable', names: [variable!, ...fields], pos: token.pos };
      }
      case 'field':
        return { kind: 'field', names: token.value.slice(1).split('.'), pos: token.pos };
      case 'bool':
        return { kind: 'bool', value: token.value === 'true', pos: token.pos };
      case 'charConstant':
      case 'number':
        return number(token);
      case 'leftParen':
        return {
          kind: 'pipe',
          pipe: pipeline('parenthesized pipeline', 'rightParen'),
          pos: token.pos,
        };
      case 'string':
      case 'rawString':
        return { kind: 'string', value: unquote(token), quoted: token.value, pos: token.pos };
    }
    backup();
    return null;
  }

  function unquote(token: Token): string {
    try {
      return unquoteGoString(token.value);
    } catch {
      return fail(`invalid syntax: ${token.value}`, token.line);
    }
  }

  function number(token: Token): ArgNode {
    const text = token.value;
    if (token.type === 'charConstant') {
      const rune = unquote({ ...token, value: `"${text.slice(1, -1).replace(/"/g, '\\"')}"` });
      if ([...rune].length !== 1) fail(`malformed character constant: ${text}`);
      return { kind: 'number', text, isFloat: false, value: rune.codePointAt(0)!, pos: token.pos };
    }
    if (text.endsWith('i')) return fail(`complex numbers are not supported: ${text}`);
    const value = parseGoNumberLiteral(text);
    if (value === null) return fail(`illegal number syntax: ${JSON.stringify(text)}`);
    const isHex = /^[+-]?0[xX]/.test(text);
    const isFloat = isHex ? /[pP.]/.test(text) : /[.eEpP]/.test(text);
    if (!isFloat && !Number.isSafeInteger(value) && Math.abs(value) > 2 ** 63) {
      fail(`integer overflow: ${JSON.stringify(text)}`);
    }
    return { kind: 'number', text, isFloat, value, pos: token.pos };
  }

  // Top level: `{{define}}` only here, as Go's Tree.parse allows.
  const root: TemplateNode[] = [];
  while (peek().type !== 'eof') {
    if (peek().type === 'leftDelim') {
      const delimAt = index;
      next();
      const keyword = nextNonSpace();
      if (keyword.type === 'keyword' && keyword.value === 'define') {
        actionLine = keyword.line;
        const nameToken = nextNonSpace();
        const definedName = templateName(nameToken, 'define clause');
        expect('rightDelim', 'define clause');
        actionLine = 0;
        definition(definedName);
        continue;
      }
      index = delimAt;
    }
    const node = textOrAction();
    if (node === null) continue;
    if ('terminator' in node) {
      return fail(node.terminator.kind === 'end' ? 'unexpected {{end}}' : 'unexpected {{else}}');
    }
    root.push(node);
  }
  return { text, root, definitions };
}

/** Go's String() of a node, as an execution error shows it (`at <humanize $value>`). */
export function nodeString(node: ArgNode | CommandNode | PipeNode): string {
  if ('cmds' in node) {
    const decl =
      node.decl.length === 0 ? '' : `${node.decl.join(', ')} ${node.isAssign ? '=' : ':='} `;
    return decl + node.cmds.map(nodeString).join(' | ');
  }
  if (!('kind' in node)) {
    return node.args
      .map((arg) => (arg.kind === 'pipe' ? `(${nodeString(arg.pipe)})` : nodeString(arg)))
      .join(' ');
  }
  switch (node.kind) {
    case 'field':
      return `.${node.names.join('.')}`;
    case 'variable':
      return node.names.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return String(node.value);
    case 'number':
      return node.text;
    case 'string':
      return node.quoted;
    case 'identifier':
      return node.name;
    case 'chain': {
      const base =
        node.node.kind === 'pipe' ? `(${nodeString(node.node.pipe)})` : nodeString(node.node);
      return `${base}.${node.fields.join('.')}`;
    }
    case 'pipe':
      return nodeString(node.pipe);
  }
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

/** A Go number literal's value (decimal, 0x, 0o, 0b, legacy octal, `_` separators), or null. */
function parseGoNumberLiteral(literal: string): number | null {
  const negative = literal.startsWith('-');
  const body = literal.replace(/^[+-]/, '');
  if (/(^_|_$|__)/.test(body.replace(/^0[xXoObB]/, ''))) return null;
  const text = body.replace(/_/g, '');
  let value: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) value = parseInt(text.slice(2), 16);
  else if (/^0[oO][0-7]+$/.test(text)) value = parseInt(text.slice(2), 8);
  else if (/^0[bB][01]+$/.test(text)) value = parseInt(text.slice(2), 2);
  else if (/^0[0-7]+$/.test(text)) value = parseInt(text.slice(1), 8);
  else if (/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) value = Number(text);
  else if (/^0[xX]([0-9a-fA-F]*\.?[0-9a-fA-F]*)[pP][+-]?\d+$/.test(text)) {
    const [mantissa, exponent] = text.slice(2).split(/[pP]/) as [string, string];
    const [whole, fraction = ''] = mantissa.split('.');
    value =
      (parseInt(`${whole}${fraction}` || '0', 16) / 16 ** fraction.length) * 2 ** Number(exponent);
  } else return null;
  return negative ? -value : value;
}
