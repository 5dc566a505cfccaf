import { useState } from 'preact/hooks';
import type { ApiClient } from './api-client.js';
import type { Pagination } from './api-types.js';
import { usePolling } from './use-polling.js';

export type PagedList<T> = {
  /** The page's items; undefined until the first answer. */
  items: T[] | undefined;
  pagination: Pagination | undefined;
  /** The last load's error (or one a view reports through `setError`), cleared by a good load. */
  error: unknown;
  setError: (error: unknown) => void;
  /** Loads the page again now, after a change the view made. */
  reload: () => void;
};

/**
 * One page of a list endpoint that answers `{ [field]: T[], pagination }`, polled every
 * `refreshMs` while the tab is visible, and loaded again at once when `query` changes.
 */
export function usePagedList<T>(
  api: ApiClient,
  path: string,
  field: string,
  query: Record<string, string | undefined>,
  refreshMs: number,
): PagedList<T> {
  const [items, setItems] = useState<T[] | undefined>();
  const [pagination, setPagination] = useState<Pagination | undefined>();
  const [error, setError] = useState<unknown>();
  const [reloads, setReloads] = useState(0);
  usePolling(
    async (_first, signal) => {
      try {
        const page = await api.get<Record<string, unknown>>(path, query);
        if (signal.cancelled) return;
        setItems(page[field] as T[]);
        setPagination(page['pagination'] as Pagination);
        setError(undefined);
      } catch (caught) {
        if (!signal.cancelled) setError(caught);
        throw caught;
      }
    },
    refreshMs,
    `${path}:${JSON.stringify(query)}:${reloads}`,
  );
  return {
    items,
    pagination,
    error,
    setError,
    reload: () => setReloads((value) => value + 1),
  };
}
