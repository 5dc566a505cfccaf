import type {
  FloatHistogram,
  Labels,
  PromqlEngine,
  QueryValue,
  SeriesSource,
} from '@monitor/promql';
import { createPromqlEngine, labelsFrom, labelsKey, labelsToRecord } from '@monitor/promql';
import { expandAlertTemplate } from './alert-template.js';
import type { OverlaySample } from './recorded-overlay-source.js';
import { createRecordedOverlaySource } from './recorded-overlay-source.js';
import type { AlertingRule, RecordingRule, Rule, RuleGroup } from './rule-group.js';

/** Prometheus keeps a resolved alert this long, so that Alertmanager hears it resolved. */
const resolvedRetentionMs = 15 * 60 * 1000;

type AlertState = 'pending' | 'firing' | 'inactive';

/** One alert of an alerting rule, as Prometheus' rule manager holds it between evaluations. */
export type ActiveAlert = {
  /** The alert's labels: the sample's without __name__, the rule's expanded, `alertname`. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: AlertState;
  /** When the condition started to hold (pending from here; firing after `for`). */
  activeAtMs: number;
  firedAtMs: number | null;
  /** When it stopped firing; kept 15 min after, then forgotten. */
  resolvedAtMs: number | null;
  /** Since when a firing alert's condition no longer holds, while keep_firing_for runs. */
  keepFiringSinceMs: number | null;
  value: number;
  /** When it was last sent to Alertmanagers (`alertsToSend`); absent until then. */
  lastSentAtMs?: number;
  /** Prometheus' ValidUntil of that send: Alertmanager takes it for resolved after it. */
  validUntilMs?: number;
};

/** What one rule keeps between evaluations. */
type RuleState = {
  alerts: ActiveAlert[];
  /** Label sets of the series the rule wrote last time, for staleness markers. */
  writtenSeries: Record<string, string>[];
};

/** A group's state: per rule, keyed by `ruleStateKey`. Persist it as it is (JSON-safe). */
export type RuleGroupState = { rules: Record<string, RuleState> };

/** A rule's outcome at this evaluation, for the rules API and logs. */
type RuleHealth = { health: 'ok' | 'err'; lastError: string | null };

export type RuleGroupEvaluation = {
  state: RuleGroupState;
  /**
   * Samples to write at the evaluation time: recorded series, ALERTS and ALERTS_FOR_STATE; a
   * recorded native histogram as `histogram` (its value then 0).
   */
  samples: WrittenSample[];
  /** Series written at the previous evaluation and not now: write a staleness marker. */
  staleSeries: Record<string, string>[];
  /** Per rule, in the group's order. */
  health: RuleHealth[];
};

export type RuleGroupEvaluationOptions = {
  /** The tenant's series. */
  source: SeriesSource;
  /** Engine limits, as the evaluator role configures them (timeout: RULE_QUERY_TIMEOUT_MS). */
  engine: {
    lookbackDeltaMs: number;
    maxSamples: number;
    maxSeries: number;
    timeoutMs: number;
  };
  externalLabels: Readonly<Record<string, string>>;
  externalUrl: string;
  signal?: AbortSignal;
};

/**
 * The key of a rule's state in a group: its name and labels, numbered when several rules share
 * them, as Prometheus carries state across a reload by name and labels.
 */
export function ruleStateKeys(rules: readonly Rule[]): string[] {
  const seen = new Map<string, number>();
  return rules.map((rule) => {
    const base = `${rule.kind === 'alert' ? rule.alert : rule.record}${JSON.stringify(labelsToRecord(labelsFrom(rule.labels)))}`;
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}#${count}`;
  });
}

/** The state keys of a group's rules, and of its alerting rules alone. */
export function ruleGroupKeys(group: Pick<RuleGroup, 'rules'>): {
  ruleKeys: string[];
  alertingRuleKeys: string[];
} {
  const ruleKeys = ruleStateKeys(group.rules);
  return {
    ruleKeys,
    alertingRuleKeys: ruleKeys.filter((_, i) => group.rules[i]?.kind === 'alert'),
  };
}

/**
 * Evaluates every rule of `group` at `timeMs`, in order, with Prometheus 2.42's semantics
 * (rules/alerting.go, recording.go, group.go): a later rule sees what earlier ones recorded at
 * this time; `for` holds an alert pending, `keep_firing_for` keeps it firing, resolved alerts
 * stay 15 min; a failing rule keeps its state and reports its error. Pure but for the queries.
 */
export async function evaluateRuleGroup(
  group: RuleGroup,
  previous: RuleGroupState,
  timeMs: number,
  options: RuleGroupEvaluationOptions,
): Promise<RuleGroupEvaluation> {
  const recorded: OverlaySample[] = [];
  const engine = createPromqlEngine({
    source: createRecordedOverlaySource(options.source, recorded),
    lookbackDeltaMs: options.engine.lookbackDeltaMs,
    maxSamples: options.engine.maxSamples,
    maxSeries: options.engine.maxSeries,
    maxPointsPerSeries: 11_000,
    timeoutMs: options.engine.timeoutMs,
  });
  const keys = ruleStateKeys(group.rules);
  const state: RuleGroupState = { rules: {} };
  const samples: RuleGroupEvaluation['samples'] = [];
  const staleSeries: RuleGroupEvaluation['staleSeries'] = [];
  const health: RuleHealth[] = [];
  for (const [i, rule] of group.rules.entries()) {
    const key = keys[i]!;
    const before = previous.rules[key] ?? { alerts: [], writtenSeries: [] };
    try {
      const vector = await queryVector(engine, rule.expr, timeMs, options.signal);
      const outcome =
        rule.kind === 'record'
          ? { written: record(rule, vector, group.limit), alerts: [] }
          : await alert(rule, vector, before.alerts, timeMs, group.limit, engine, options);
      for (const sample of outcome.written) {
        samples.push(sample);
        recorded.push({ ...sample, labels: labelsFrom(sample.labels), timeMs });
      }
      const now = new Set(outcome.written.map((s) => labelsKey(labelsFrom(s.labels))));
      for (const series of before.writtenSeries) {
        if (now.has(labelsKey(labelsFrom(series)))) continue;
        staleSeries.push(series);
        recorded.push({ labels: labelsFrom(series), timeMs, value: Number.NaN, stale: true });
      }
      state.rules[key] = {
        alerts: outcome.alerts,
        writtenSeries: outcome.written.map((s) => s.labels),
      };
      health.push({ health: 'ok', lastError: null });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Prometheus resets an alerting rule that exceeded its limit; other errors keep state.
      state.rules[key] = error instanceof LimitExceeded ? { ...before, alerts: [] } : before;
      health.push({ health: 'err', lastError: message });
    }
  }
  return { state, samples, staleSeries, health };
}

class LimitExceeded extends Error {}

type Sample = { labels: Labels; value: number; histogram?: FloatHistogram };

/** A sample a rule writes: a float, or (recorded) a native histogram beside the value 0. */
type WrittenSample = { labels: Record<string, string>; value: number; histogram?: FloatHistogram };

/** Prometheus' EngineQueryFunc: a vector as it is, a scalar as one sample without labels. */
async function queryVector(
  engine: PromqlEngine,
  expr: string,
  timeMs: number,
  signal: AbortSignal | undefined,
): Promise<Sample[]> {
  const result: QueryValue = await engine.instantQuery(expr, timeMs, signal);
  if (result.resultType === 'vector')
    return result.result.map((s) =>
      s.h === undefined
        ? { labels: s.metric, value: s.v }
        : { labels: s.metric, value: s.v, histogram: s.h },
    );
  if (result.resultType === 'scalar') return [{ labels: [], value: result.result.v }];
  throw new Error('rule result is not a vector or scalar');
}

function record(rule: RecordingRule, vector: readonly Sample[], limit: number): WrittenSample[] {
  const out = vector.map((sample): WrittenSample => {
    const labels = dropEmpty({
      ...labelsToRecord(sample.labels),
      __name__: rule.record,
      ...rule.labels,
    });
    return sample.histogram === undefined
      ? { labels, value: sample.value }
      : { labels, value: sample.value, histogram: sample.histogram };
  });
  const keys = new Set(out.map((s) => labelsKey(labelsFrom(s.labels))));
  if (keys.size !== out.length) {
    throw new Error('vector contains metrics with the same labelset after applying rule labels');
  }
  if (limit > 0 && out.length > limit) {
    throw new Error(`exceeded limit of ${limit} with ${out.length} series`);
  }
  return out;
}

async function alert(
  rule: AlertingRule,
  vector: readonly Sample[],
  previous: readonly ActiveAlert[],
  timeMs: number,
  limit: number,
  engine: PromqlEngine,
  options: RuleGroupEvaluationOptions,
): Promise<{
  written: { labels: Record<string, string>; value: number }[];
  alerts: ActiveAlert[];
}> {
  const environment = {
    externalUrl: options.externalUrl,
    query: async (q: string) =>
      (await queryVector(engine, q, timeMs, options.signal)).map((s) => ({
        labels: labelsToRecord(s.labels),
        value: s.value,
      })),
  };
  // This evaluation's alerts, by label set.
  const current = new Map<string, ActiveAlert>();
  for (const sample of vector) {
    const data = {
      labels: labelsToRecord(sample.labels),
      externalLabels: options.externalLabels,
      externalUrl: options.externalUrl,
      value: sample.value,
    };
    const labels: Record<string, string> = labelsToRecord(sample.labels);
    delete labels['__name__'];
    for (const [name, text] of Object.entries(rule.labels)) {
      labels[name] = storable(await expandAlertTemplate(rule.alert, text, data, environment));
    }
    labels['alertname'] = rule.alert;
    const annotations: Record<string, string> = {};
    for (const [name, text] of Object.entries(rule.annotations)) {
      annotations[name] = storable(await expandAlertTemplate(rule.alert, text, data, environment));
    }
    const alertLabels = dropEmpty(labels);
    const key = labelsKey(labelsFrom(alertLabels));
    if (current.has(key)) {
      throw new Error('vector contains metrics with the same labelset after applying alert labels');
    }
    current.set(key, {
      labels: alertLabels,
      annotations: dropEmpty(annotations),
      state: 'pending',
      activeAtMs: timeMs,
      firedAtMs: null,
      resolvedAtMs: null,
      keepFiringSinceMs: null,
      value: sample.value,
    });
  }
  // Known alerts keep their state, taking this evaluation's value and annotations.
  const active = new Map(previous.map((a) => [labelsKey(labelsFrom(a.labels)), { ...a }]));
  for (const [key, fresh] of current) {
    const known = active.get(key);
    if (known !== undefined && known.state !== 'inactive') {
      known.value = fresh.value;
      known.annotations = fresh.annotations;
    } else {
      active.set(key, fresh);
    }
  }
  const written: { labels: Record<string, string>; value: number }[] = [];
  let activeCount = 0;
  for (const [key, a] of active) {
    if (!current.has(key)) {
      let keepFiring = false;
      if (a.state === 'firing' && rule.keepFiringForMs > 0) {
        a.keepFiringSinceMs ??= timeMs;
        keepFiring = timeMs - a.keepFiringSinceMs < rule.keepFiringForMs;
      }
      if (
        a.state === 'pending' ||
        (a.resolvedAtMs !== null && timeMs - a.resolvedAtMs > resolvedRetentionMs)
      ) {
        active.delete(key);
      }
      if (a.state !== 'inactive' && !keepFiring) {
        a.state = 'inactive';
        a.resolvedAtMs = timeMs;
      }
      if (!keepFiring) continue;
    } else {
      a.keepFiringSinceMs = null;
    }
    activeCount++;
    if (a.state === 'pending' && timeMs - a.activeAtMs >= rule.forMs) {
      a.state = 'firing';
      a.firedAtMs = timeMs;
    }
    written.push({ labels: { ...a.labels, __name__: 'ALERTS', alertstate: a.state }, value: 1 });
    written.push({
      labels: { ...a.labels, __name__: 'ALERTS_FOR_STATE' },
      value: Math.floor(a.activeAtMs / 1000),
    });
  }
  if (limit > 0 && activeCount > limit) {
    throw new LimitExceeded(`exceeded limit of ${limit} with ${activeCount} alerts`);
  }
  return { written, alerts: [...active.values()] };
}

/**
 * A template's output as it can be stored: NUL and unpaired UTF-16 surrogates (which PostgreSQL
 * stores in neither `text` nor `jsonb`) become U+FFFD, so that one odd template cannot make every
 * save of its group's state and alerts fail.
 */
function storable(text: string): string {
  return text
    .replaceAll('\u0000', '\ufffd')
    .replaceAll(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    );
}

/** Prometheus' label builder drops a label set to "". */
function dropEmpty(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== ''));
}
