import type { Service, ServiceStatus } from './api-types.js';
import { serviceStatuses } from './api-types.js';

type StatusCounts = Record<ServiceStatus, number>;

export type HostGroup = {
  /** The tag value shared by the group, or undefined for services without the tag. */
  value: string | undefined;
  services: Service[];
  counts: StatusCounts;
  /** The worst status in the group (critical > warning > stale > healthy). */
  worst: ServiceStatus;
};

const emptyCounts = (): StatusCounts => ({ critical: 0, warning: 0, stale: 0, healthy: 0 });

/**
 * Groups services by the value of tag `tagKey` (all in one group when undefined), biggest
 * group first, then by value; within a group the worst statuses come first. A service without
 * the tag lands in the group whose value is undefined, listed last.
 */
export function groupServices(
  services: readonly Service[],
  tagKey: string | undefined,
): HostGroup[] {
  const groups = new Map<string | undefined, Service[]>();
  for (const service of services) {
    const value = tagKey === undefined ? undefined : service.tags[tagKey];
    const members = groups.get(value);
    if (members === undefined) groups.set(value, [service]);
    else members.push(service);
  }
  const result: HostGroup[] = [];
  for (const [value, members] of groups) {
    const counts = emptyCounts();
    for (const service of members) counts[service.status] += 1;
    members.sort(
      (a, b) => statusRank(a.status) - statusRank(b.status) || compareText(a.name, b.name),
    );
    const worst = serviceStatuses.find((status) => counts[status] > 0) ?? 'healthy';
    result.push({ value, services: members, counts, worst });
  }
  return result.sort(
    (a, b) =>
      Number(a.value === undefined) - Number(b.value === undefined) ||
      b.services.length - a.services.length ||
      compareText(a.value ?? '', b.value ?? ''),
  );
}

/** Every tag key carried by at least one service, sorted. */
export function tagKeys(services: readonly Service[]): string[] {
  const keys = new Set<string>();
  for (const service of services) for (const key of Object.keys(service.tags)) keys.add(key);
  return [...keys].sort(compareText);
}

export function statusRank(status: ServiceStatus): number {
  return serviceStatuses.indexOf(status);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
