export type { GoValue } from './go-values.js';
export {
  formatGoFloat,
  formatGoValue,
  goTypeName,
  GoHtml,
  GoMap,
  GoStruct,
  GoTime,
  stringMap,
} from './go-values.js';
export type { ParsedTemplate } from './template-nodes.js';
export { parseGoTemplate } from './parse-go-template.js';
export { TemplateParseError } from './parse-state.js';
export type { GoFunction } from './go-function.js';
export { executeGoTemplate } from './execute-go-template.js';
export { builtinFunctionNames, builtinFunctions } from './builtin-functions.js';
export { goQueryEscape } from './go-escapes.js';
