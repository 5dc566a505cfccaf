import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Service } from './api-types.js';
import { serviceColumns, tableRows, visibleWindow } from './service-table.js';

const service = fc.record({
  id: fc.uuid(),
  name: fc.stringMatching(/^[a-z]{1,6}-[0-9]{1,3}$/),
  status: fc.constantFrom('healthy', 'warning', 'critical', 'stale' as const),
  last_seen: fc
    .integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 })
    .map((ms) => new Date(ms).toISOString()),
  metrics: fc.dictionary(fc.constantFrom('cpu', 'mem', 'load'), fc.double({ noNaN: true })),
  tags: fc.dictionary(fc.constantFrom('env', 'role'), fc.constantFrom('prod', 'dev', 'web')),
}) as fc.Arbitrary<Service>;

describe('tableRows', () => {
  it('keeps exactly the rows matching every word, in an order that reverses with descending', () => {
    fc.assert(
      fc.property(
        fc.array(service, { maxLength: 40 }),
        fc.constantFrom('', 'prod', 'env=dev', 'web critical', 'a-1'),
        fc.constantFrom(...serviceColumns),
        (services, filter, column) => {
          const ascending = tableRows(services, filter, { column, descending: false });
          const descending = tableRows(services, filter, { column, descending: true });
          expect(new Set(ascending)).toEqual(new Set(descending));
          for (const row of ascending) {
            const text = [
              row.name,
              row.status,
              ...Object.entries(row.tags).map(([k, v]) => `${k}=${v}`),
            ]
              .join(' ')
              .toLowerCase();
            for (const word of filter.split(' ').filter(Boolean)) expect(text).toContain(word);
          }
          const kept = services.filter((each) => ascending.includes(each));
          expect(ascending).toHaveLength(kept.length);
          if (column === 'name') {
            const names = ascending.map((each) => each.name);
            expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          }
        },
      ),
    );
  });

  it('sorts by status worst first', () => {
    const rows = tableRows(
      ['healthy', 'critical', 'stale', 'warning'].map(
        (status, index) =>
          ({
            id: `${index}`,
            name: `h${index}`,
            status,
            last_seen: '',
            metrics: {},
            tags: {},
          }) as Service,
      ),
      '',
      { column: 'status', descending: false },
    );
    expect(rows.map((row) => row.status)).toEqual(['critical', 'warning', 'stale', 'healthy']);
  });
});

describe('visibleWindow', () => {
  it('covers the rows in view, within bounds, whatever the scroll', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: -100, max: 1_000_000 }),
        fc.integer({ min: 1, max: 2000 }),
        (rows, scrollTop, viewport) => {
          const { start, end } = visibleWindow(rows, 34, scrollTop, viewport);
          expect(start).toBeGreaterThanOrEqual(0);
          expect(end).toBeLessThanOrEqual(rows);
          const firstInView = Math.floor(Math.max(0, scrollTop) / 34);
          const lastInView = Math.min(rows, Math.ceil((Math.max(0, scrollTop) + viewport) / 34));
          if (firstInView < rows) {
            expect(start).toBeLessThanOrEqual(firstInView);
            expect(end).toBeGreaterThanOrEqual(lastInView);
          }
          expect(end - start).toBeLessThanOrEqual(Math.ceil(viewport / 34) + 1 + 16);
        },
      ),
    );
  });
});
