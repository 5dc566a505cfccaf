import { lexGoTemplate } from './lex-go-template.js';
import type { Token } from './template-scanner.js';
import { parsePipeline } from './parse-pipeline.js';
import type { ParseState } from './parse-state.js';
import { createParseState } from './parse-state.js';
import type { ParsedTemplate, PipeNode, TemplateNode } from './template-nodes.js';

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
  const state = createParseState(name, lexGoTemplate(text), functions);
  // Top level: `{{define}}` only here, as Go's Tree.parse allows.
  const root: TemplateNode[] = [];
  while (state.peek().type !== 'eof') {
    if (state.peek().type === 'leftDelim') {
      const delimAt = state.index;
      state.next();
      const keyword = state.nextNonSpace();
      if (keyword.type === 'keyword' && keyword.value === 'define') {
        state.actionLine = keyword.line;
        const nameToken = state.nextNonSpace();
        const definedName = templateName(state, nameToken, 'define clause');
        state.expect('rightDelim', 'define clause');
        state.actionLine = 0;
        definition(state, definedName);
        continue;
      }
      state.index = delimAt;
    }
    const node = textOrAction(state);
    if (node === null) continue;
    if ('terminator' in node) {
      return state.fail(
        node.terminator.kind === 'end' ? 'unexpected {{end}}' : 'unexpected {{else}}',
      );
    }
    root.push(node);
  }
  return { text, root, definitions: state.definitions };
}

function itemList(state: ParseState): { list: TemplateNode[]; terminator: Terminator } {
  const list: TemplateNode[] = [];
  while (state.peekNonSpace().type !== 'eof') {
    const node = textOrAction(state);
    if (node !== null && 'terminator' in node) return { list, terminator: node.terminator };
    if (node !== null) list.push(node);
  }
  return state.fail('unexpected EOF');
}

function textOrAction(state: ParseState): TemplateNode | { terminator: Terminator } | null {
  const token = state.nextNonSpace();
  switch (token.type) {
    case 'text':
      return { kind: 'text', text: token.value };
    case 'leftDelim':
      state.actionLine = token.line;
      try {
        return action(state);
      } finally {
        state.actionLine = 0;
      }
    case 'comment':
      return null;
    default:
      return state.unexpected(token, 'input');
  }
}

function action(state: ParseState): TemplateNode | { terminator: Terminator } | null {
  const token = state.nextNonSpace();
  if (token.type === 'comment') {
    state.expect('rightDelim', 'comment');
    return null;
  }
  if (token.type === 'keyword') {
    switch (token.value) {
      case 'block':
        return blockControl(state);
      case 'break':
      case 'continue': {
        const after = state.nextNonSpace();
        if (after.type !== 'rightDelim') state.unexpected(after, `in {{${token.value}}}`);
        if (state.rangeDepth === 0) state.fail(`{{${token.value}}} outside {{range}}`);
        return { kind: token.value };
      }
      case 'else': {
        if (state.peekNonSpace().type === 'keyword' && state.peekNonSpace().value === 'if') {
          return { terminator: { kind: 'else', elseIf: true } };
        }
        state.expect('rightDelim', 'else');
        return { terminator: { kind: 'else', elseIf: false } };
      }
      case 'end':
        state.expect('rightDelim', 'end');
        return { terminator: { kind: 'end' } };
      case 'if':
        return control(state, 'if', true);
      case 'range':
        return control(state, 'range', false);
      case 'with':
        return control(state, 'with', false);
      case 'template':
        return templateControl(state, 'template');
      case 'define':
        return state.fail('unexpected <define> in command');
    }
  }
  state.backup();
  // Variables declared in a plain action stay until the enclosing {{end}}.
  return { kind: 'action', pipe: parsePipeline(state, 'command', 'rightDelim') };
}

function control(
  state: ParseState,
  kind: 'if' | 'range' | 'with',
  allowElseIf: boolean,
): TemplateNode {
  const saved = state.vars.length;
  try {
    const pipe = parsePipeline(state, kind, 'rightDelim');
    if (kind === 'range') state.rangeDepth++;
    const body = itemList(state);
    if (kind === 'range') state.rangeDepth--;
    let elseList: TemplateNode[] | null = null;
    if (body.terminator.kind === 'else') {
      if (allowElseIf && body.terminator.elseIf) {
        state.nextNonSpace(); // the `if` of `{{else if …}}`: one {{end}} closes both
        elseList = [control(state, 'if', true)];
      } else {
        if (body.terminator.elseIf) {
          // `{{else if}}` inside range/with: Go reads the `if` as an unexpected token.
          state.unexpected(state.nextNonSpace(), 'input');
        }
        const rest = itemList(state);
        if (rest.terminator.kind !== 'end') state.fail('expected end; found {{else}}');
        elseList = rest.list;
      }
    }
    return { kind, pipe, list: body.list, elseList };
  } finally {
    state.vars = state.vars.slice(0, saved);
  }
}

function templateName(state: ParseState, token: Token, context: string): string {
  if (token.type === 'string' || token.type === 'rawString') return state.unquote(token);
  return state.unexpected(token, context);
}

function templateControl(state: ParseState, context: string): TemplateNode {
  const templateNameToken = state.nextNonSpace();
  const templateNameValue = templateName(state, templateNameToken, context);
  let pipe: PipeNode | null = null;
  if (state.nextNonSpace().type !== 'rightDelim') {
    state.backup();
    pipe = parsePipeline(state, context, 'rightDelim');
  }
  return { kind: 'template', name: templateNameValue, pipe };
}

function blockControl(state: ParseState): TemplateNode {
  const nameToken = state.nextNonSpace();
  const blockName = templateName(state, nameToken, 'block clause');
  const pipe = parsePipeline(state, 'block clause', 'rightDelim');
  definition(state, blockName);
  return { kind: 'template', name: blockName, pipe };
}

/** A `define`d body: its own variable scope, ending at {{end}}. */
function definition(state: ParseState, definedName: string): void {
  const savedVars = state.vars;
  const savedDepth = state.rangeDepth;
  state.vars = ['$'];
  state.rangeDepth = 0;
  const body = itemList(state);
  if (body.terminator.kind !== 'end') state.fail('unexpected {{else}}');
  state.definitions.set(definedName, body.list);
  state.vars = savedVars;
  state.rangeDepth = savedDepth;
}
