import { describe, expect, it } from 'vitest';
import {
  dailyPartition,
  parsePartitionDay,
  partitionName,
  planPartitions,
} from './partition-plan.js';

const day = (iso: string): Date => new Date(`${iso}T00:00:00Z`);

describe('partitionName', () => {
  it('names the UTC day of a time', () => {
    expect(partitionName('samples', new Date('2026-11-22T23:59:59.999Z'))).toBe(
      'samples_p20261122',
    );
    expect(partitionName('snapshots', new Date('2026-01-05T00:00:00Z'))).toBe(
      'snapshots_p20260105',
    );
  });
});

describe('dailyPartition', () => {
  it('covers one UTC day, half open', () => {
    expect(dailyPartition('samples', new Date('2026-11-22T13:00:00Z'))).toEqual({
      name: 'samples_p20261122',
      from: day('2026-11-22'),
      to: day('2026-11-23'),
    });
  });
});

describe('parsePartitionDay', () => {
  it('reads the day back from a name', () => {
    expect(parsePartitionDay('samples', 'samples_p20261122')).toEqual(day('2026-11-22'));
  });

  it('ignores the default partition, other tables and impossible dates', () => {
    expect(parsePartitionDay('samples', 'samples_default')).toBeUndefined();
    expect(parsePartitionDay('samples', 'snapshots_p20261122')).toBeUndefined();
    expect(parsePartitionDay('samples', 'samples_p20261345')).toBeUndefined();
    expect(parsePartitionDay('samples', 'samples_p20261122_old')).toBeUndefined();
  });
});

describe('planPartitions', () => {
  const now = new Date('2026-11-22T10:00:00Z');

  it('plans every day from the retention cutoff to daysAhead after today', () => {
    const plan = planPartitions({
      table: 'samples',
      now,
      daysAhead: 2,
      retentionDays: 3,
      existing: [],
    });
    expect(plan.cutoff).toEqual(new Date('2026-11-19T10:00:00Z'));
    expect(plan.create.map((p) => p.name)).toEqual([
      'samples_p20261119',
      'samples_p20261120',
      'samples_p20261121',
      'samples_p20261122',
      'samples_p20261123',
      'samples_p20261124',
    ]);
    expect(plan.drop).toEqual([]);
  });

  it('drops partitions that end at or before the cutoff and keeps the one holding it', () => {
    const plan = planPartitions({
      table: 'samples',
      now,
      daysAhead: 0,
      retentionDays: 3,
      existing: [
        'samples_p20261117',
        'samples_p20261118',
        'samples_p20261119',
        'samples_default',
        'samples_manual',
      ],
    });
    expect(plan.drop).toEqual(['samples_p20261117', 'samples_p20261118']);
    expect(plan.create.map((p) => p.name)).toEqual([
      'samples_p20261120',
      'samples_p20261121',
      'samples_p20261122',
    ]);
  });

  it('plans nothing when everything exists', () => {
    const first = planPartitions({
      table: 'snapshots',
      now,
      daysAhead: 1,
      retentionDays: 1,
      existing: [],
    });
    const again = planPartitions({
      table: 'snapshots',
      now,
      daysAhead: 1,
      retentionDays: 1,
      existing: first.create.map((p) => p.name),
    });
    expect(again.create).toEqual([]);
    expect(again.drop).toEqual([]);
  });

  it('rejects a retention below one day and a negative look-ahead', () => {
    expect(() =>
      planPartitions({ table: 'samples', now, daysAhead: 1, retentionDays: 0, existing: [] }),
    ).toThrow(RangeError);
    expect(() =>
      planPartitions({ table: 'samples', now, daysAhead: -1, retentionDays: 1, existing: [] }),
    ).toThrow(RangeError);
  });
});
