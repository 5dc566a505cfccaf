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
export type { ParsedTemplate } from './go-template-parse.js';
export { parseGoTemplate, TemplateParseError } from './go-template-parse.js';
export type { GoFunction } from './go-template-execute.js';
export {
  builtinFunctionNames,
  builtinFunctions,
  executeGoTemplate,
  goQueryEscape,
} from './go-template-execute.js';
