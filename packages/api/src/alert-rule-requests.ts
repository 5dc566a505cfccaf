import type {
  AlertRuleCreateRequest,
  AlertRuleFields,
  AlertRuleUpdateRequest,
  RuleFlapping,
} from '@monitor/schemas';

/** Wire → store: a POST body with its defaults applied. */
export function toAlertRuleFields(body: AlertRuleCreateRequest): AlertRuleFields {
  return {
    name: body.name,
    metric: body.metric,
    condition: body.condition,
    threshold: body.threshold,
    durationMinutes: body.duration_minutes,
    severity: body.severity,
    channels: body.channels,
    scope: body.scope,
    enabled: body.enabled,
    recoveryThreshold: body.recovery_threshold,
    keepFiringForMinutes: body.keep_firing_for_minutes,
    noDataMinutes: body.no_data_minutes,
    noDataState: body.no_data_state,
    renotifyMinutes: body.renotify_minutes,
    messageTemplate: body.message_template,
    flapping: toFlapping(body.flapping),
  };
}

function toFlapping(
  flapping: { window_minutes: number; max_transitions: number } | null,
): RuleFlapping | null {
  return flapping === null
    ? null
    : { windowMinutes: flapping.window_minutes, maxTransitions: flapping.max_transitions };
}

/** Wire → store: only the fields a PATCH body sets. */
export function toAlertRuleChanges(body: AlertRuleUpdateRequest): Partial<AlertRuleFields> {
  const changes: Partial<AlertRuleFields> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.metric !== undefined) changes.metric = body.metric;
  if (body.condition !== undefined) changes.condition = body.condition;
  if (body.threshold !== undefined) changes.threshold = body.threshold;
  if (body.duration_minutes !== undefined) changes.durationMinutes = body.duration_minutes;
  if (body.severity !== undefined) changes.severity = body.severity;
  if (body.channels !== undefined) changes.channels = body.channels;
  if (body.scope !== undefined) changes.scope = body.scope;
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  if (body.recovery_threshold !== undefined) changes.recoveryThreshold = body.recovery_threshold;
  if (body.keep_firing_for_minutes !== undefined)
    changes.keepFiringForMinutes = body.keep_firing_for_minutes;
  if (body.no_data_minutes !== undefined) changes.noDataMinutes = body.no_data_minutes;
  if (body.no_data_state !== undefined) changes.noDataState = body.no_data_state;
  if (body.renotify_minutes !== undefined) changes.renotifyMinutes = body.renotify_minutes;
  if (body.message_template !== undefined) changes.messageTemplate = body.message_template;
  if (body.flapping !== undefined) changes.flapping = toFlapping(body.flapping);
  return changes;
}
