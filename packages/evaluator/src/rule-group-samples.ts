import type { RuleGroupEvaluation } from '@monitor/rules';
import type { SampleMessage } from '@monitor/schemas';

/**
 * The service every series a rule writes is stored under, whatever its labels: storage keeps
 * each series under a service, and a rule's output must not pass for the host it is about (the
 * services list takes a host's tags, metrics and last sight from its latest samples, which would
 * then be ALERTS' labels and a host seen alive by a rule about it). PromQL reads series by their
 * labels, which stay exactly as recorded.
 */
export const ruleSeriesHost = 'prometheus-rules';

type Labels = Readonly<Record<string, string>>;

/**
 * What one evaluation writes, as sample messages of the samples topic (as a remote-write of
 * those series at `timeMs`, under the service `ruleSeriesHost`): one per label set with its
 * metrics and recorded histograms, its staleness markers for the series the rules no longer
 * write.
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
    const key = JSON.stringify(tags);
    let message = messages.get(key);
    if (message === undefined) {
      message = {
        v: 1,
        org_id: orgId,
        host: ruleSeriesHost,
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
    if (sample.histogram === undefined) {
      message.metrics[name] = sample.value;
      continue;
    }
    // A recorded histogram: float counts, as PromQL computed them.
    (message.histograms ??= {})[name] = {
      ...sample.histogram,
      integer: false,
      counterResetHint: 'unknown',
      customValues: [],
    };
  }
  for (const labels of evaluation.staleSeries) {
    const { message, name } = messageOf(labels);
    (message.stale_metrics ??= []).push(name);
  }
  return [...messages.values()];
}
