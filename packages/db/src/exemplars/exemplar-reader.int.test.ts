// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabelMatcher } from '@monitor/promql';
import { createLabelMatcher } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { DatabaseUnavailableError } from '../core/database-errors.js';
import { createExemplarReader } from '../index.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { ExemplarsRead } from './exemplar-reader.js';

const orgId = 'org_exemplars';
const otherOrgId = 'org_exemplars_other';
const equal = (name: string, value: string): LabelMatcher => createLabelMatcher(name, '=', value);
const limits = { maxSeries: 100, maxExemplars: 1000 };

/** A read as plain data: each series' labels as a record, its exemplars as they came. */
const plain = (read: ExemplarsRead) =>
  'overLimit' in read
    ? read
    : read.series.map((s) => ({
        labels: Object.fromEntries(s.seriesLabels.map((l) => [l.name, l.value])),
        exemplars: s.exemplars,
      }));

/** A stored series of `serviceId` (labels null: an /ingest series), by id. */
async function storeSeries(
  db: Database,
  serviceId: string,
  metric: string,
  labels: Record<string, string> | null,
): Promise<string> {
  const [row] = await db.sql<{ id: string }[]>`
    insert into series (service_id, metric, labels)
    values (${serviceId}, ${metric}, ${labels === null ? null : JSON.stringify(labels)}::text::jsonb)
    returning id::text as id
  `;
  return row!.id;
}

async function storeExemplars(
  db: Database,
  seriesId: string,
  exemplars: { timeMs: number; value: number; labels: Record<string, string> }[],
): Promise<void> {
  for (const { timeMs, value, labels } of exemplars) {
    await db.sql`
      insert into exemplars (series_id, time, value, labels)
      values (${seriesId}::bigint, ${new Date(timeMs)}, ${String(value)}::float8,
        ${JSON.stringify(labels)}::text::jsonb)
    `;
  }
}

describe.each(['postgres', 'timescale'] as const)('the exemplar reader (%s)', (server) => {
  let db: Database;
  let dispose: () => Promise<void>;
  const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  const allOfTime = { startMs: -9_223_372_036_854, endMs: 9_223_372_036_854 };
  const read = (selectors: LabelMatcher[][], range = allOfTime, org = orgId, bounds = limits) =>
    createExemplarReader(db).read(org, selectors, range, bounds).then(plain);
  const pay = { job: 'shop', route: '/pay' };
  const cart = { job: 'shop', route: '/cart' };

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(server, 'exemplar_reader'));
    await db.sql`
      insert into services (id, org_id, name, tags, last_seen) values
        ('svc_web1', ${orgId}, 'web-1', '{"env": "prod"}', now()),
        ('svc_web2', ${orgId}, 'web-2', '{}', now()),
        ('svc_other', ${otherOrgId}, 'web-1', '{}', now())
    `;
    const payId = await storeSeries(db, 'svc_web1', 'requests_total', pay);
    const cartId = await storeSeries(db, 'svc_web1', 'requests_total', cart);
    const bucketId = await storeSeries(db, 'svc_web2', 'latency_bucket', {
      job: 'shop',
      le: '0.1',
    });
    const ingestId = await storeSeries(db, 'svc_web1', 'cpu', null);
    await storeSeries(db, 'svc_web2', 'requests_total', { job: 'quiet' });
    // Another organization's series with the same labels, and an exemplar of its own.
    const otherPayId = await storeSeries(db, 'svc_other', 'requests_total', pay);
    await storeExemplars(db, payId, [
      { timeMs: t0 + 2000, value: NaN, labels: { trace_id: 'p3' } },
      { timeMs: t0 + 479, value: 6, labels: { trace_id: 'p1', span_id: '12' } },
      { timeMs: t0 + 1000, value: 0.25, labels: { trace_id: 'p2' } },
    ]);
    await storeExemplars(db, cartId, [{ timeMs: t0 + 500, value: -1.5e-9, labels: {} }]);
    await storeExemplars(db, bucketId, [
      { timeMs: t0 + 100, value: 0.05, labels: { trace_id: 'b1' } },
    ]);
    await storeExemplars(db, ingestId, [{ timeMs: t0 + 300, value: 42, labels: { a: 'x' } }]);
    await storeExemplars(db, otherPayId, [
      { timeMs: t0 + 479, value: 99, labels: { trace_id: 'other' } },
    ]);
  });

  afterAll(async () => {
    await dispose?.();
  });

  it("reads the series of any selector, by label set, each one's exemplars in time order", async () => {
    const found = await read([
      [equal('__name__', 'requests_total'), equal('route', '/pay')],
      [equal('__name__', 'latency_bucket')],
      [equal('__name__', 'requests_total'), equal('route', '/cart')],
    ]);
    expect(found).toEqual([
      {
        labels: { __name__: 'latency_bucket', job: 'shop', le: '0.1' },
        exemplars: [{ timeMs: t0 + 100, value: 0.05, labels: { trace_id: 'b1' } }],
      },
      {
        labels: { __name__: 'requests_total', ...cart },
        exemplars: [{ timeMs: t0 + 500, value: -1.5e-9, labels: {} }],
      },
      {
        labels: { __name__: 'requests_total', ...pay },
        exemplars: [
          { timeMs: t0 + 479, value: 6, labels: { span_id: '12', trace_id: 'p1' } },
          { timeMs: t0 + 1000, value: 0.25, labels: { trace_id: 'p2' } },
          { timeMs: t0 + 2000, value: NaN, labels: { trace_id: 'p3' } },
        ],
      },
    ]);
  });

  it('matches every matcher of a selector, regular expressions and negations included', async () => {
    const found = await read([
      [
        createLabelMatcher('__name__', '=~', 'requests_.+'),
        createLabelMatcher('route', '!=', '/cart'),
      ],
    ]);
    expect(found).toMatchObject([{ labels: { __name__: 'requests_total', ...pay } }]);
    // An /ingest series, labelled by its service's name and tags.
    expect(await read([[equal('__name__', 'cpu'), equal('env', 'prod')]])).toEqual([
      {
        labels: { __name__: 'cpu', env: 'prod', host: 'web-1' },
        exemplars: [{ timeMs: t0 + 300, value: 42, labels: { a: 'x' } }],
      },
    ]);
  });

  it('takes the exemplars at start and at end, and none beyond either', async () => {
    const pays = [[equal('__name__', 'requests_total'), equal('route', '/pay')]];
    const times = async (startMs: number, endMs: number) => {
      const found = await read(pays, { startMs, endMs });
      return 'overLimit' in found ? found : found.flatMap((s) => s.exemplars.map((e) => e.timeMs));
    };
    expect(await times(t0 + 479, t0 + 1000)).toEqual([t0 + 479, t0 + 1000]);
    expect(await times(t0 + 480, t0 + 1999)).toEqual([t0 + 1000]);
    expect(await times(t0 + 1001, t0 + 1999)).toEqual([]);
  });

  it("never reads another organization's exemplars", async () => {
    const selectors = [[equal('__name__', 'requests_total'), equal('route', '/pay')]];
    expect(await read(selectors, allOfTime, otherOrgId)).toEqual([
      {
        labels: { __name__: 'requests_total', ...pay },
        exemplars: [{ timeMs: t0 + 479, value: 99, labels: { trace_id: 'other' } }],
      },
    ]);
    expect(await read([[equal('route', '/pay')]], allOfTime, 'org_none')).toEqual([]);
  });

  it('answers none for series without exemplars, or without any in range', async () => {
    expect(await read([[equal('job', 'quiet')]])).toEqual([]);
    expect(await read([[equal('__name__', 'nothing')]])).toEqual([]);
    expect(await read([[equal('job', 'shop')]], { startMs: 0, endMs: t0 })).toEqual([]);
  });

  it('stops at more series or exemplars than its limits', async () => {
    const shop = [[equal('job', 'shop')]];
    expect(await read(shop, allOfTime, orgId, { maxSeries: 2, maxExemplars: 1000 })).toEqual({
      overLimit: 'maxSeries',
    });
    expect(await read(shop, allOfTime, orgId, { maxSeries: 3, maxExemplars: 4 })).toEqual({
      overLimit: 'maxExemplars',
    });
    expect(await read(shop, allOfTime, orgId, { maxSeries: 3, maxExemplars: 5 })).toHaveLength(3);
  });
});

describe('the exemplar reader, with the database away', () => {
  it('throws the retriable error', async () => {
    const { db, dispose } = await migratedDatabase('postgres', 'exemplar_reader_away');
    await dispose();
    await expect(
      createExemplarReader(db).read(
        orgId,
        [[equal('job', 'shop')]],
        { startMs: 0, endMs: 1 },
        limits,
      ),
    ).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });
});
