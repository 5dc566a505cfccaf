import type { GoFunction } from './go-function.js';
import type { GoValue } from './go-values.js';
import type { ArgNode, CommandNode, ParsedTemplate } from './template-nodes.js';
import { nodeString } from './template-nodes.js';

/** A template that failed while running; the message is as close to Go's as cheaply possible. */
export class TemplateExecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateExecError';
  }
}

/** A variable in scope while a template runs, innermost last. */
export type Variable = { name: string; value: GoValue };

/** What every step of one run of a template knows: the template, its functions, its errors. */
export type ExecContext = {
  readonly template: ParsedTemplate;
  readonly functions: ReadonlyMap<string, GoFunction>;
  /** Go's state.errorf: where (line and byte in line of `at`) and what it was running. */
  fail(message: string, at?: ArgNode | CommandNode): never;
};

export function createExecContext(
  name: string,
  template: ParsedTemplate,
  functions: ReadonlyMap<string, GoFunction>,
): ExecContext {
  return {
    template,
    functions,
    fail(message, at) {
      if (at === undefined) throw new TemplateExecError(`template: ${name}: ${message}`);
      const before = template.text.slice(0, at.pos);
      const lineStart = before.lastIndexOf('\n') + 1;
      const line = 1 + (before.match(/\n/g)?.length ?? 0);
      const byte = Buffer.byteLength(before.slice(lineStart));
      throw new TemplateExecError(
        `template: ${name}:${line}:${byte}: executing "${name}" at <${nodeString(at)}>: ${message}`,
      );
    },
  };
}
