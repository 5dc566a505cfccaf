import type { GoFunction, ParsedTemplate } from '@monitor/go-template';
import {
  builtinFunctionNames,
  builtinFunctions,
  executeGoTemplate,
  GoStruct,
  parseGoTemplate,
  stringMap,
  TemplateParseError,
} from '@monitor/go-template';
import type { TemplateEnvironment } from './prometheus-template-functions.js';
import { prometheusFunctionNames, prometheusFunctions } from './prometheus-template-functions.js';

/** What an alert's labels and annotations are expanded with. */
export type AlertTemplateData = {
  labels: Readonly<Record<string, string>>;
  externalLabels: Readonly<Record<string, string>>;
  externalUrl: string;
  value: number;
};

// Prometheus prepends these so that `$labels`, `$value`… exist in every label and annotation.
const definitions =
  '{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}';

const functionNames: ReadonlySet<string> = new Set([
  ...builtinFunctionNames,
  ...prometheusFunctionNames,
]);

const templateName = (alertName: string): string => `__alert_${alertName}`;

function parse(alertName: string, text: string): ParsedTemplate {
  return parseGoTemplate(templateName(alertName), definitions + text, functionNames);
}

/**
 * Go's parse error for a label or annotation template of alert `alertName` (`template:
 * __alert_NAME:1: …`, as `promtool check rules` prints it), or null when it parses.
 */
export function checkAlertTemplate(alertName: string, text: string): string | null {
  try {
    parse(alertName, text);
    return null;
  } catch (error) {
    if (error instanceof TemplateParseError) return error.message;
    throw error;
  }
}

/**
 * Expands one label or annotation of an alert as Prometheus does: on any error the result is
 * `<error expanding template: …>`, never a throw, so that a bad template cannot stop a rule.
 */
export async function expandAlertTemplate(
  alertName: string,
  text: string,
  data: AlertTemplateData,
  environment: TemplateEnvironment = {},
): Promise<string> {
  const name = templateName(alertName);
  try {
    const template = parse(alertName, text);
    const functions = new Map<string, GoFunction>([
      ...builtinFunctions(),
      ...prometheusFunctions({ externalUrl: data.externalUrl, ...environment }),
    ]);
    const root = new GoStruct(
      {
        Labels: stringMap(data.labels),
        ExternalLabels: stringMap(data.externalLabels),
        ExternalURL: data.externalUrl,
        Value: data.value,
      },
      'struct { Labels map[string]string; ExternalLabels map[string]string; ExternalURL string; Value float64 }',
    );
    return await executeGoTemplate(name, template, root, functions);
  } catch (error) {
    const message =
      error instanceof TemplateParseError
        ? `error parsing template ${name}: ${error.message}`
        : `error executing template ${name}: ${(error as Error).message}`;
    return `<error expanding template: ${message}>`;
  }
}
