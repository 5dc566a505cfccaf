import type { Pagination, PaginationQuery } from '@monitor/schemas';

/**
 * The `pagination` block of every list response: `has_more` when items follow the
 * `returned` ones of this page.
 */
export function pageOf(query: PaginationQuery, returned: number, total: number): Pagination {
  return {
    limit: query.limit,
    offset: query.offset,
    total,
    has_more: query.offset + returned < total,
  };
}
