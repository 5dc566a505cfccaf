import type { Pagination } from '../api-types.js';
import { setSearchParam } from '../navigation.js';

/** Previous / next over a paginated list; the offset lives in the URL (`offset`). */
export function Pager(props: { pagination: Pagination | undefined; label: string }) {
  const page = props.pagination;
  if (page === undefined || page.total <= page.limit) return null;
  const last = Math.min(page.offset + page.limit, page.total);
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button
        type="button"
        disabled={page.offset === 0}
        onClick={() =>
          setSearchParam('offset', String(Math.max(0, page.offset - page.limit)) || undefined)
        }
      >
        Previous
      </button>
      <span>
        {page.offset + 1}–{last} of {page.total}
      </span>
      <button
        type="button"
        disabled={!page.has_more}
        onClick={() => setSearchParam('offset', String(page.offset + page.limit))}
      >
        Next
      </button>
    </nav>
  );
}
