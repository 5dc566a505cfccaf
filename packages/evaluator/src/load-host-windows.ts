import type { EvaluatorStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { DecodedHostSample } from './decode-samples.js';
import type { BatchWork } from './evaluate-samples.js';
import { markChanged } from './evaluate-samples.js';
import type { HostWindows } from './host-windows.js';
import { hostKey, parseMarks } from './host-windows.js';
import type { PartitionCache } from './partition-cache.js';
import type { RuleSet } from './rule-set.js';
import { parseWindowState } from './rule-window.js';

/**
 * Puts the batch's hosts with rules to apply in `work.hosts`: copies of the cached ones, the
 * others loaded from the store in one call. A stored state or marks that this code cannot read
 * (damaged) are dropped with a warning: its rules then count as having evaluated nothing on the
 * host. Returns how many hosts were loaded and the newest epoch among their marks.
 */
export async function loadHostWindows(
  deps: { store: Pick<EvaluatorStore, 'loadHosts'>; logger: Logger },
  decoded: readonly DecodedHostSample[],
  rules: RuleSet,
  cache: PartitionCache | undefined,
  work: BatchWork,
): Promise<{ loaded: number; newestEpoch: number }> {
  const missing: HostWindows[] = [];
  for (const { message, hostKey: key } of decoded) {
    if (work.hosts.has(key) || rules.groupsByMetric(message.orgId) === undefined) continue;
    const cached = cache?.hosts.get(key);
    const host: HostWindows = {
      orgId: message.orgId,
      host: message.host,
      marks: new Map(cached?.marks),
      windows: new Map(cached?.windows),
    };
    work.hosts.set(key, host);
    if (cached === undefined) missing.push(host);
  }
  let newestEpoch = 0;
  if (missing.length === 0) return { loaded: 0, newestEpoch };
  const stored = await deps.store.loadHosts(missing);
  for (const record of stored.states) {
    const host = work.hosts.get(hostKey(record.orgId, record.host));
    if (host === undefined) continue;
    const state = parseWindowState(record.state);
    if (state !== undefined) host.windows.set(record.ruleId, state);
    else {
      deps.logger.warn(
        { ruleId: record.ruleId, host: record.host },
        'unreadable window state reset',
      );
      markChanged(work, host, record.ruleId);
    }
  }
  for (const record of stored.watermarks) {
    const host = work.hosts.get(hostKey(record.orgId, record.host));
    if (host === undefined) continue;
    const marks = parseMarks(record.marks);
    if (marks === undefined) {
      deps.logger.warn({ host: record.host }, 'unreadable watermarks reset');
      work.marked.add(host);
      continue;
    }
    host.marks = marks;
    for (const mark of marks.values()) newestEpoch = Math.max(newestEpoch, mark.epoch);
  }
  return { loaded: missing.length, newestEpoch };
}
