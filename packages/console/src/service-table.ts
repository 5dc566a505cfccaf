import type { Service } from './api-types.js';
import { statusRank } from './host-map.js';

export const serviceColumns = ['name', 'status', 'last_seen', 'metrics', 'tags'] as const;
export type ServiceColumn = (typeof serviceColumns)[number];
export type SortOrder = { column: ServiceColumn; descending: boolean };

/**
 * The rows of the services table: those whose name, status or a tag (`key=value`) contains
 * every word of `filter` (case-insensitive), sorted by `order` (ties by name, so the order is
 * total and stable across refreshes).
 */
export function tableRows(
  services: readonly Service[],
  filter: string,
  order: SortOrder,
): Service[] {
  const words = filter
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
  const rows =
    words.length === 0 ? [...services] : services.filter((service) => matches(service, words));
  const direction = order.descending ? -1 : 1;
  const key = sortKey(order.column);
  return rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const primary = ka < kb ? -1 : ka > kb ? 1 : 0;
    return primary * direction || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  });
}

function matches(service: Service, words: readonly string[]): boolean {
  const haystack = [
    service.name,
    service.status,
    ...Object.entries(service.tags).map(([key, value]) => `${key}=${value}`),
  ]
    .join(' ')
    .toLowerCase();
  return words.every((word) => haystack.includes(word));
}

function sortKey(column: ServiceColumn): (service: Service) => string | number {
  switch (column) {
    case 'name':
      return (service) => service.name;
    case 'status':
      return (service) => statusRank(service.status);
    case 'last_seen':
      return (service) => Date.parse(service.last_seen);
    case 'metrics':
      return (service) => Object.keys(service.metrics).length;
    case 'tags':
      return (service) =>
        Object.entries(service.tags)
          .map(([key, value]) => `${key}=${value}`)
          .sort()
          .join(',');
  }
}

/** The slice of rows a virtualised list draws: those in view plus `overscan` on each side. */
export function visibleWindow(
  rowCount: number,
  rowHeightPx: number,
  scrollTopPx: number,
  viewportPx: number,
  overscan = 8,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTopPx) / rowHeightPx);
  const inView = Math.ceil(viewportPx / rowHeightPx) + 1;
  return {
    start: Math.max(0, first - overscan),
    end: Math.min(rowCount, first + inView + overscan),
  };
}
