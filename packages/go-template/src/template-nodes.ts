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
