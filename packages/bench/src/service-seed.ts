import type { Database } from '@monitor/db';
import type { SeedAlert, SeedService } from '@monitor/db/bench';
import { insertSeedAlerts, insertSeedServices, insertSeedSnapshots } from '@monitor/db/bench';
import { createSeededRandom } from '@monitor/testkit';

/**
 * A realistic services table for the query API's benchmark, written straight into the database
 * (10,000 hosts through the pipeline would measure the pipeline, not the API): rows shaped as
 * the writer upserts them, a snapshot per host, and alerts rows shaped as `fireAlert` and
 * `resolveAlerts` leave them.
 */

type PlannedStatus = 'healthy' | 'warning' | 'critical' | 'stale';

export type PlannedService = {
  id: string;
  name: string;
  tags: { environment: string; region: string; service: string };
  metrics: Record<string, number>;
  lastSeenMs: number;
  /** Severity of its one active alert, if it has one. */
  activeAlert: 'critical' | 'warning' | undefined;
  /** Whether it also carries an alert resolved earlier (history the status must ignore). */
  resolvedAlert: boolean;
  /** The status the API must report, by the contract's precedence. */
  status: PlannedStatus;
};

type ServicePlanOptions = {
  count: number;
  /** Same seed, same plan (ids included). */
  seed: number;
  /** The seeding time: fresh services were seen within a minute before it. */
  nowMs: number;
  /** Services last seen this long before `nowMs` or longer are the stale ones. */
  staleAfterMs: number;
  /** Share of services last seen long ago (0..1). */
  staleShare: number;
  /** Share of services with an active alert (0..1). */
  activeAlertShare: number;
};

const environments = [
  ['prod', 0.5],
  ['staging', 0.3],
  ['dev', 0.2],
] as const;
const regions = ['eu-west-1', 'eu-central-1', 'us-east-1', 'ap-south-1'] as const;
const serviceNames = [
  'api',
  'billing',
  'checkout',
  'edge',
  'postgres',
  'redis',
  'search',
  'worker',
] as const;
/** Active alerts are critical this often, else warning. */
const criticalShare = 0.6;
/** Services with an alert in their history, resolved. */
const resolvedAlertShare = 0.1;
/** Rules the seeded alerts pretend to come from, and when they were made. */
const seededRuleCount = 20;
const rulesCreatedAtMs = Date.UTC(2026, 0, 1);

/** Deterministic services; every `PlannedService.status` follows the contract's precedence. */
export function planServices(options: ServicePlanOptions): PlannedService[] {
  const random = createSeededRandom(options.seed).next;
  const idTimeMs = options.nowMs - 30 * 24 * 3_600_000;
  return Array.from({ length: options.count }, (_, index): PlannedService => {
    const service = pick(serviceNames, random);
    const region = pick(regions, random);
    const stale = random() < options.staleShare;
    const lastSeenMs = stale
      ? options.nowMs - options.staleAfterMs - Math.floor(random() * 24 * 3_600_000)
      : options.nowMs - Math.floor(random() * 60_000);
    const activeAlert =
      random() < options.activeAlertShare
        ? random() < criticalShare
          ? 'critical'
          : 'warning'
        : undefined;
    return {
      // Ids made over a month, as hosts joined: id order is not name order.
      id: ulidLike('svc', idTimeMs + Math.floor(random() * 30 * 24 * 3_600_000), random),
      name: `${service}-${region}-${String(index).padStart(5, '0')}`,
      tags: { environment: weighted(environments, random), region, service },
      metrics: {
        cpu_percent: percent(random),
        memory_percent: percent(random),
        disk_percent: percent(random),
        load_1m: Math.round(random() * 800) / 100,
      },
      lastSeenMs,
      activeAlert,
      resolvedAlert: random() < resolvedAlertShare,
      status: activeAlert ?? (stale ? 'stale' : 'healthy'),
    };
  });
}

/** How many planned services each filter of the benchmark must find. */
export function countPlanned(plan: readonly PlannedService[]): {
  total: number;
  byStatus: Record<PlannedStatus, number>;
  byEnvironment: Record<string, number>;
} {
  const byStatus: Record<PlannedStatus, number> = { healthy: 0, warning: 0, critical: 0, stale: 0 };
  const byEnvironment: Record<string, number> = {};
  for (const service of plan) {
    byStatus[service.status]++;
    const environment = service.tags.environment;
    byEnvironment[environment] = (byEnvironment[environment] ?? 0) + 1;
  }
  return { total: plan.length, byStatus, byEnvironment };
}

/** Inserts the plan's services, snapshots and alerts into `orgId`, in chunks. */
export async function insertPlannedServices(
  db: Database,
  orgId: string,
  plan: readonly PlannedService[],
  seed: number,
): Promise<void> {
  const random = createSeededRandom(seed + 1).next;
  const ruleIds = Array.from({ length: seededRuleCount }, (_, i) =>
    ulidLike('rul', rulesCreatedAtMs + i * 60_000, random),
  );
  const chunkSize = 2_000;
  for (let start = 0; start < plan.length; start += chunkSize) {
    const chunk = plan.slice(start, start + chunkSize);
    const lastSeen = chunk.map((s) => new Date(s.lastSeenMs).toISOString());
    const services: SeedService[] = chunk.map((s, i) => ({
      id: s.id,
      name: s.name,
      tagsJson: JSON.stringify(s.tags),
      metricsJson: JSON.stringify(s.metrics),
      metricTimesJson: JSON.stringify(metricTimes(s)),
      lastSeen: lastSeen[i] ?? '',
    }));
    await insertSeedServices(db, orgId, services);
    // The random draws in the order they always were: every container list, then every process list.
    const containers = chunk.map((s) => JSON.stringify(containersOf(s, random)));
    const processes = chunk.map(() => JSON.stringify(processesOf(random)));
    await insertSeedSnapshots(
      db,
      chunk.map((s, i) => ({
        time: lastSeen[i] ?? '',
        serviceId: s.id,
        containersJson: containers[i] ?? '[]',
        processesJson: processes[i] ?? '[]',
      })),
    );
    const alerts = chunk.flatMap((s) => alertRows(s, ruleIds, random));
    if (alerts.length === 0) continue;
    await insertSeedAlerts(db, orgId, alerts);
  }
}

function alertRows(
  service: PlannedService,
  ruleIds: readonly string[],
  random: () => number,
): SeedAlert[] {
  const rows: SeedAlert[] = [];
  const alert = (
    severity: string,
    firedAtMs: number,
    resolvedAtMs: number | undefined,
  ): SeedAlert => {
    const rule = Math.floor(random() * ruleIds.length);
    return {
      id: ulidLike('alr', firedAtMs, random),
      ruleId: ruleIds[rule] ?? '',
      ruleName: `cpu above 90 (${rule + 1})`,
      serviceId: service.id,
      host: service.name,
      severity,
      status: resolvedAtMs === undefined ? 'active' : 'resolved',
      value: 90 + Math.round(random() * 100) / 10,
      startedAt: new Date(firedAtMs - 5 * 60_000).toISOString(),
      firedAt: new Date(firedAtMs).toISOString(),
      resolvedAt: resolvedAtMs === undefined ? null : new Date(resolvedAtMs).toISOString(),
    };
  };
  if (service.resolvedAlert) {
    const firedAtMs = service.lastSeenMs - 3 * 3_600_000;
    rows.push(alert('critical', firedAtMs, firedAtMs + 20 * 60_000));
  }
  if (service.activeAlert !== undefined) {
    rows.push(alert(service.activeAlert, service.lastSeenMs - 2 * 60_000, undefined));
  }
  return rows;
}

function metricTimes(service: PlannedService): Record<string, number> {
  return Object.fromEntries(Object.keys(service.metrics).map((name) => [name, service.lastSeenMs]));
}

function containersOf(service: PlannedService, random: () => number): unknown[] {
  return Array.from({ length: 5 }, (_, i) => ({
    name: `${service.tags.service}-${i + 1}`,
    image: `${service.tags.service}:1.${i}`,
    status: 'running',
    cpu_percent: Math.round(random() * 500) / 10,
    memory_usage: Math.round(random() * 512) * 1_048_576,
  }));
}

function processesOf(random: () => number): unknown[] {
  return [
    'systemd',
    'sshd',
    'dockerd',
    'containerd',
    'node',
    'nginx',
    'cron',
    'envoy',
    'bash',
    'sleep',
  ].map((name, i) => ({
    name,
    pid: 100 + i * 37,
    cpu_percent: Math.round(random() * 300) / 10,
    memory_rss: Math.round(random() * 256) * 1_048_576,
  }));
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `svc_<ULID>` from a time and the generator: the form the API's id checks accept. */
export function ulidLike(prefix: string, timeMs: number, random: () => number): string {
  let time = '';
  let rest = Math.floor(timeMs);
  for (let i = 0; i < 10; i++) {
    time = crockford.charAt(rest % 32) + time;
    rest = Math.floor(rest / 32);
  }
  let tail = '';
  for (let i = 0; i < 16; i++) tail += crockford.charAt(Math.floor(random() * 32));
  return `${prefix}_${time}${tail}`;
}

function pick<T>(values: readonly T[], random: () => number): T {
  const value = values[Math.floor(random() * values.length)];
  if (value === undefined) throw new RangeError('pick from an empty list');
  return value;
}

function weighted(choices: readonly (readonly [string, number])[], random: () => number): string {
  let roll = random();
  for (const [value, share] of choices) {
    if (roll < share) return value;
    roll -= share;
  }
  return choices[choices.length - 1]?.[0] ?? '';
}

function percent(random: () => number): number {
  return Math.round(random() * 1000) / 10;
}
