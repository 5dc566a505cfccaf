import { hostOfInstance } from '@monitor/protocols';
import type { RuleGroupEvaluation } from '@monitor/rules';
import type { SampleMessage } from '@monitor/schemas';

/**
 * The service of a recorded series that names none (no `host`, no `instance` label: an
 * aggregate across hosts). Storage keeps every series under a service; the series' labels
 * stay exactly as recorded.
 */
export const ruleSeriesHost = 'prometheus-rules';

type Labels = Readonly<Record<string, string>>;

/** As the remote-write mapping: `host`, else `instance` without its port. */
function hostOf(labels: Labels): string {
  const host = labels['host'];
  if (host !== undefined && host !== '') return host;
  const instance = labels['instance'];
  if (instance !== undefined && instance !== '') return hostOfInstance(instance);
  return ruleSeriesHost;
}

/**
 * What one evaluation writes, as sample messages of the samples topic (the same as a
 * remote-write of those series at `timeMs`): one per (host, label set) with its metrics, its
 * staleness markers for the series the rules no longer write.
 */
export function ruleGroupSampleMessages(
  orgId: string,
  evaluation: Pick<RuleGroupEvaluation, 'samples' | 'staleSeries'>,
  timeMs: number,
  receivedMs: number,
): SampleMessage[] {
  const messages = new Map<string, SampleMessage>();
  function messageOf(labels: Labels): { message: SampleMessage; name: string } {
    const { __name__: name = '', ...rest } = labels;
    const tags = Object.fromEntries(
      Object.entries(rest)
        .filter(([, value]) => value !== '')
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    const host = hostOf(tags);
    const key = JSON.stringify([host, tags]);
    let message = messages.get(key);
    if (message === undefined) {
      message = {
        v: 1,
        org_id: orgId,
        host,
        time_ms: timeMs,
        received_ms: receivedMs,
        metrics: {},
        tags,
        tags_label_series: true,
        containers: [],
        processes: [],
      };
      messages.set(key, message);
    }
    return { message, name };
  }
  for (const sample of evaluation.samples) {
    const { message, name } = messageOf(sample.labels);
    message.metrics[name] = sample.value;
  }
  for (const labels of evaluation.staleSeries) {
    const { message, name } = messageOf(labels);
    (message.stale_metrics ??= []).push(name);
  }
  return [...messages.values()];
}
