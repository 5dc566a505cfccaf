export type { AlertTemplateData } from './alert-template.js';
export { checkAlertTemplate, expandAlertTemplate } from './alert-template.js';
export type { TemplateEnvironment } from './prometheus-template-functions.js';
export { formatPrometheusDuration, parsePrometheusDuration } from './prometheus-duration.js';
export type { RuleParseResult } from './parse-rule-file.js';
export { parseRuleFile, parseRuleGroup } from './parse-rule-file.js';
export type { AlertingRule, RecordingRule, Rule, RuleGroup } from './rule-group.js';
export type {
  ActiveAlert,
  RuleGroupEvaluation,
  RuleGroupEvaluationOptions,
  RuleGroupState,
} from './evaluate-rule-group.js';
export { evaluateRuleGroup, ruleGroupKeys, ruleStateKeys } from './evaluate-rule-group.js';
export type { AlertSendOptions, AlertToSend } from './alerts-to-send.js';
export { alertsToSend } from './alerts-to-send.js';
