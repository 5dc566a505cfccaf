import { describe, expect, it } from 'vitest';
import { readPlan } from './services-page-explain.js';

/** Shapes of plans PostgreSQL 15 gave for the page at offset 9,900 (trimmed). */
const sortedWholeOrganization = [
  'Sort  (cost=4395.89..4396.14 rows=100 width=300) (actual time=37.022..37.034 rows=100 loops=1)',
  '  ->  Nested Loop Left Join  (cost=3564.35..4392.57 rows=100 width=300) (actual time=36.411..36.919 rows=100 loops=1)',
  '        ->  Index Only Scan using services_org_id_name_key on services s  (cost=0.41..1054.41 rows=10000 width=0) (actual time=0.045..2.819 rows=10000 loops=1)',
  '        ->  Limit  (cost=2476.64..2476.89 rows=100 width=260) (actual time=32.493..32.540 rows=100 loops=1)',
  '              ->  Sort  (cost=2451.89..2476.89 rows=10000 width=260) (actual time=28.652..31.763 rows=10000 loops=1)',
  '                    Sort Method: external sort  Disk: 2728kB',
  '                    ->  Seq Scan on services s_1  (cost=0.00..1787.50 rows=10000 width=260) (actual time=0.013..6.926 rows=10000 loops=1)',
  '        ->  Index Scan using alerts_service_id_status_idx on alerts  (cost=0.28..8.30 rows=1 width=8) (actual time=0.003..0.003 rows=0 loops=100)',
];

const pageFromIndex = [
  'Sort  (cost=1720.10..1720.35 rows=100 width=499) (actual time=2.900..2.910 rows=100 loops=1)',
  '  ->  Nested Loop  (cost=1012.47..1717.66 rows=100 width=499) (actual time=2.235..2.751 rows=100 loops=1)',
  '        ->  Limit  (cost=1012.19..1022.41 rows=100 width=54) (actual time=2.214..2.243 rows=100 loops=1)',
  '              ->  Incremental Sort  (cost=1.00..1022.41 rows=10000 width=54) (actual time=0.050..2.100 rows=10000 loops=1)',
  '                    ->  Index Scan using services_org_id_name_key on services s_1  (cost=0.41..1022.41 rows=10000 width=54) (actual time=0.015..1.725 rows=10000 loops=1)',
  '        ->  Index Scan using services_pkey on services s  (cost=0.29..6.94 rows=1 width=445) (actual time=0.004..0.004 rows=1 loops=100)',
];

describe('readPlan', () => {
  it('lists the indexes a plan reads', () => {
    expect(readPlan(sortedWholeOrganization, 100).indexes).toEqual([
      'services_org_id_name_key',
      'alerts_service_id_status_idx',
    ]);
  });

  it('says the order does not come from an index when a Sort emits the whole organization', () => {
    expect(readPlan(sortedWholeOrganization, 100).orderFromIndex).toBe(false);
  });

  it('accepts the name index with an incremental sort and a sort of the page only', () => {
    expect(readPlan(pageFromIndex, 100).orderFromIndex).toBe(true);
  });

  it('does not credit an index that is not the name index', () => {
    const lines = pageFromIndex.map((line) =>
      line.replace('services_org_id_name_key', 'services_tags_idx'),
    );
    expect(readPlan(lines, 100).orderFromIndex).toBe(false);
  });
});
