import { describe, expect, it } from 'vitest';
import { bucketStart } from '../rollups.js';
import { plainRefreshWindow } from './rollup-refresh.js';

const now = new Date('2026-11-22T10:17:42.500Z');

describe('bucketStart', () => {
  it('floors to UTC minutes and hours', () => {
    expect(bucketStart(now, 60_000)).toEqual(new Date('2026-11-22T10:17:00Z'));
    expect(bucketStart(now, 3_600_000)).toEqual(new Date('2026-11-22T10:00:00Z'));
  });
});

describe('plainRefreshWindow', () => {
  it('covers everything before the current bucket on the first run', () => {
    expect(
      plainRefreshWindow({ rollup: 'samples_1m', now, watermark: null, onlyWhenAdvanced: false }),
    ).toEqual({
      rollup: 'samples_1m',
      from: null,
      to: new Date('2026-11-22T10:17:00Z'),
    });
  });

  it('looks two hours behind the watermark for late samples', () => {
    const watermark = new Date('2026-11-22T10:16:00Z');
    expect(
      plainRefreshWindow({ rollup: 'samples_1m', now, watermark, onlyWhenAdvanced: false }),
    ).toEqual({
      rollup: 'samples_1m',
      from: new Date('2026-11-22T08:16:00Z'),
      to: new Date('2026-11-22T10:17:00Z'),
    });
  });

  it('refreshes samples_1h only once a new hour completed', () => {
    const options = { rollup: 'samples_1h', now, onlyWhenAdvanced: true } as const;
    expect(
      plainRefreshWindow({ ...options, watermark: new Date('2026-11-22T10:00:00Z') }),
    ).toBeUndefined();
    expect(plainRefreshWindow({ ...options, watermark: new Date('2026-11-22T09:00:00Z') })).toEqual(
      {
        rollup: 'samples_1h',
        from: new Date('2026-11-22T07:00:00Z'),
        to: new Date('2026-11-22T10:00:00Z'),
      },
    );
  });
});
