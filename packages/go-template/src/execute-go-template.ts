import type { GoFunction } from './go-function.js';
import type { GoValue } from './go-values.js';
import { formatGoValue, GoMap, isTrue } from './go-values.js';
import type { Variable } from './exec-context.js';
import { createExecContext } from './exec-context.js';
import { evaluatePipeline } from './evaluate-pipeline.js';
import type { ParsedTemplate, TemplateNode } from './template-nodes.js';

/** `{{break}}` and `{{continue}}` unwind to their range as these. */
class Break extends Error {}
class Continue extends Error {}

/** Runs a parsed template over `data` with Go's semantics (missingkey=zero), asynchronously. */
export async function executeGoTemplate(
  name: string,
  template: ParsedTemplate,
  data: GoValue,
  functions: ReadonlyMap<string, GoFunction>,
): Promise<string> {
  let out = '';
  const ctx = createExecContext(name, template, functions);

  async function walkList(dot: GoValue, list: readonly TemplateNode[], vars: Variable[]) {
    for (const node of list) await walk(dot, node, vars);
  }

  async function walk(dot: GoValue, node: TemplateNode, vars: Variable[]): Promise<void> {
    switch (node.kind) {
      case 'text':
        out += node.text;
        return;
      case 'action': {
        const value = await evaluatePipeline(ctx, dot, node.pipe, vars);
        if (node.pipe.decl.length === 0)
          out += value === null ? '<no value>' : formatGoValue(value);
        return;
      }
      case 'if':
      case 'with': {
        const mark = vars.length;
        const value = await evaluatePipeline(ctx, dot, node.pipe, vars);
        if (isTrue(value)) await walkList(node.kind === 'with' ? value : dot, node.list, vars);
        else if (node.elseList !== null) await walkList(dot, node.elseList, vars);
        vars.length = mark;
        return;
      }
      case 'range': {
        const mark = vars.length;
        const value = await evaluatePipeline(ctx, dot, node.pipe, vars);
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
        if (body === undefined) ctx.fail(`no such template ${JSON.stringify(node.name)}`);
        const value = node.pipe === null ? null : await evaluatePipeline(ctx, dot, node.pipe, vars);
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
    return ctx.fail(`range can't iterate over ${formatGoValue(value)}`);
  }

  await walkList(data, template.root, [{ name: '$', value: data }]);
  return out;
}
