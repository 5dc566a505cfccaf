/** The checks the database and shard scenarios make once the load stopped. */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import { countFiredAlerts, listHostValues } from '@monitor/db/bench';
import type { PartitionProbeResults } from './failover-probe.js';
import { failoverSeqMetric } from './failover-probe.js';
import type { DatabaseFailover } from './failover-report.js';

/** The probe hosts' stored steps in `db` (one row a sample). */
export function listProbeSteps(
  db: Database,
  hosts: readonly string[],
): ReturnType<typeof listHostValues> {
  return listHostValues(db, hosts, failoverSeqMetric);
}

/** Each probe host's acknowledged steps, one by one: stored (`rows`), and stored once. */
export function checkProbeSamples(
  rows: Awaited<ReturnType<typeof listProbeSteps>>,
  hosts: readonly string[],
  results: readonly PartitionProbeResults[],
): DatabaseFailover['samples']['probeHosts'] {
  let acknowledged = 0;
  let missing = 0;
  let duplicates = 0;
  hosts.forEach((host, partition) => {
    const steps = results[partition]?.stored.length ?? 0;
    acknowledged += steps;
    const seen = new Map<number, number>();
    for (const row of rows)
      if (row.host === host) seen.set(row.value, (seen.get(row.value) ?? 0) + 1);
    for (let step = 0; step < steps; step++) {
      const count = seen.get(step) ?? 0;
      if (count === 0) missing += 1;
      if (count > 1) duplicates += count - 1;
    }
  });
  return { acknowledged, missing, duplicates };
}

/** Every breaching probe step fired one alert (one per fired_at), none twice. */
export async function checkProbeAlerts(
  db: Database,
  ruleIds: readonly string[],
  results: readonly PartitionProbeResults[],
): Promise<DatabaseFailover['alerts']> {
  const expected = results.reduce((n, r) => n + Math.ceil(r.alert.length / 2), 0);
  const deadline = performance.now() + 60_000;
  for (;;) {
    const { fired, distinct } = await countFiredAlerts(db, ruleIds);
    if (fired >= expected || performance.now() > deadline)
      return { expected, fired, duplicates: fired - distinct };
    await sleep(500);
  }
}
