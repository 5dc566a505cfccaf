import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { SilenceSchedule } from './silence-schedule.js';
import {
  fromFloating,
  recurrenceProblem,
  silenceActiveAt,
  silenceMatches,
  silenceStateAt,
  toFloating,
} from './silence-schedule.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;
const at = (iso: string) => Date.parse(iso);

/** A recurring window: `rrule` from `startsAt` to `endsAt`, `minutes` long, in `timezone`. */
function recurring(
  rrule: string,
  minutes: number,
  timezone: string,
  startsAt = '2026-01-01T00:00:00Z',
  endsAt = '2027-01-01T00:00:00Z',
): SilenceSchedule {
  return {
    startsAt: new Date(startsAt),
    endsAt: new Date(endsAt),
    recurrence: { rrule, durationMinutes: minutes, timezone },
  };
}

describe('silenceActiveAt, one-off', () => {
  const silence: SilenceSchedule = {
    startsAt: new Date('2026-11-24T02:00:00Z'),
    endsAt: new Date('2026-11-24T04:00:00Z'),
    recurrence: null,
  };

  it('is in force from starts_at (inclusive) to ends_at (exclusive)', () => {
    expect(silenceActiveAt(silence, at('2026-11-24T01:59:59.999Z'))).toBe(false);
    expect(silenceActiveAt(silence, at('2026-11-24T02:00:00Z'))).toBe(true);
    expect(silenceActiveAt(silence, at('2026-11-24T03:59:59.999Z'))).toBe(true);
    expect(silenceActiveAt(silence, at('2026-11-24T04:00:00Z'))).toBe(false);
  });

  it('is pending, then active, then expired', () => {
    expect(silenceStateAt(silence, at('2026-11-24T01:00:00Z'))).toBe('pending');
    expect(silenceStateAt(silence, at('2026-11-24T03:00:00Z'))).toBe('active');
    expect(silenceStateAt(silence, at('2026-11-24T04:00:00Z'))).toBe('expired');
  });

  it('holds for any interval and instant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4e12 }),
        fc.integer({ min: 1, max: 1e10 }),
        fc.integer({ min: -1e10, max: 2e10 }),
        (startsMs, lengthMs, offsetMs) => {
          const schedule = {
            startsAt: new Date(startsMs),
            endsAt: new Date(startsMs + lengthMs),
            recurrence: null,
          };
          const t = startsMs + offsetMs;
          expect(silenceActiveAt(schedule, t)).toBe(t >= startsMs && t < startsMs + lengthMs);
        },
      ),
    );
  });
});

describe('silenceActiveAt, recurring in a time zone', () => {
  // Every day at 02:00 Berlin time for one hour: 01:00Z in winter (CET), 00:00Z in summer.
  const nightly = recurring('FREQ=DAILY;BYHOUR=2;BYMINUTE=0;BYSECOND=0', 60, 'Europe/Berlin');

  it('opens and closes on time in winter and in summer', () => {
    expect(silenceActiveAt(nightly, at('2026-11-24T00:59:59Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-11-24T01:00:00Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-11-24T01:59:59Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-11-24T02:00:00Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-07-01T00:00:00Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-07-01T01:00:00Z'))).toBe(false);
  });

  it('follows the zone across the autumn change (02:00 happens twice: the first one counts)', () => {
    // 2026-10-25: CEST until 03:00 local (01:00Z), then CET. The first 02:00 is 00:00Z.
    expect(silenceActiveAt(nightly, at('2026-10-24T23:59:59Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-10-25T00:00:00Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-10-25T00:59:59Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-10-25T01:00:00Z'))).toBe(false);
    // The next night is winter time.
    expect(silenceActiveAt(nightly, at('2026-10-26T00:30:00Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-10-26T01:30:00Z'))).toBe(true);
  });

  it('follows the zone across the spring change (02:00 does not exist: it opens at 03:00)', () => {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z).
    expect(silenceActiveAt(nightly, at('2026-03-28T01:30:00Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-03-29T00:30:00Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-03-29T01:00:00Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-03-29T01:59:59Z'))).toBe(true);
    expect(silenceActiveAt(nightly, at('2026-03-29T02:00:00Z'))).toBe(false);
    expect(silenceActiveAt(nightly, at('2026-03-30T00:30:00Z'))).toBe(true);
  });

  it('reads BYDAY in the zone: Sunday 23:00 in New York is Monday in UTC', () => {
    const weekly = recurring('FREQ=WEEKLY;BYDAY=SU;BYHOUR=23;BYMINUTE=0', 120, 'America/New_York');
    // Sunday 2026-11-22 23:00 EST = Monday 04:00Z, for two hours.
    expect(silenceActiveAt(weekly, at('2026-11-23T03:59:00Z'))).toBe(false);
    expect(silenceActiveAt(weekly, at('2026-11-23T04:00:00Z'))).toBe(true);
    expect(silenceActiveAt(weekly, at('2026-11-23T05:59:00Z'))).toBe(true);
    expect(silenceActiveAt(weekly, at('2026-11-23T06:00:00Z'))).toBe(false);
    expect(silenceActiveAt(weekly, at('2026-11-24T04:30:00Z'))).toBe(false);
  });

  it('counts only occurrences between starts_at and ends_at, and ends at ends_at', () => {
    const bounded = recurring(
      'FREQ=DAILY;BYHOUR=2;BYMINUTE=0',
      120,
      'UTC',
      '2026-11-24T02:30:00Z',
      '2026-11-26T03:00:00Z',
    );
    // The 24th's occurrence (02:00) is before starts_at: it does not count.
    expect(silenceActiveAt(bounded, at('2026-11-24T03:00:00Z'))).toBe(false);
    expect(silenceActiveAt(bounded, at('2026-11-25T02:00:00Z'))).toBe(true);
    expect(silenceActiveAt(bounded, at('2026-11-26T02:30:00Z'))).toBe(true);
    expect(silenceActiveAt(bounded, at('2026-11-26T03:00:00Z'))).toBe(false);
    expect(silenceStateAt(bounded, at('2026-11-25T12:00:00Z'))).toBe('pending');
    expect(silenceStateAt(bounded, at('2026-11-25T02:10:00Z'))).toBe('active');
    expect(silenceStateAt(bounded, at('2026-11-26T03:00:00Z'))).toBe('expired');
  });

  it('keeps a window open across midnight and for up to a week', () => {
    const long = recurring('FREQ=WEEKLY;BYDAY=MO;BYHOUR=22', 10_080, 'UTC');
    expect(silenceActiveAt(long, at('2026-11-23T21:59:00Z'))).toBe(true); // last week's
    expect(silenceActiveAt(long, at('2026-11-26T12:00:00Z'))).toBe(true);
  });

  describe('whatever the process time zone', () => {
    const original = process.env['TZ'];
    afterEach(() => {
      if (original === undefined) delete process.env['TZ'];
      else process.env['TZ'] = original;
    });

    it('gives the same windows in Tokyo and Los Angeles', () => {
      const probes = Array.from(
        { length: 96 },
        (_, i) => at('2026-10-24T12:00:00Z') + i * 30 * minuteMs,
      );
      const seen = (zone: string) => {
        process.env['TZ'] = zone;
        return probes.map((probe) => silenceActiveAt(nightly, probe));
      };
      const tokyo = seen('Asia/Tokyo');
      expect(seen('America/Los_Angeles')).toEqual(tokyo);
      expect(seen('UTC')).toEqual(tokyo);
      expect(tokyo.filter(Boolean)).toHaveLength(4); // two nights, two half-hour probes each
    });
  });

  it('matches a reference model of a daily UTC window at any instant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 0, max: 60 * dayMs }),
        fc.integer({ min: dayMs, max: 30 * dayMs }),
        fc.integer({ min: -2 * dayMs, max: 40 * dayMs }),
        (hour, minute, minutes, startOffsetMs, lengthMs, probeOffsetMs) => {
          const startsMs = at('2026-01-01T00:00:00Z') + startOffsetMs;
          const endsMs = startsMs + lengthMs;
          const schedule = {
            startsAt: new Date(startsMs),
            endsAt: new Date(endsMs),
            recurrence: {
              rrule: `FREQ=DAILY;BYHOUR=${hour};BYMINUTE=${minute};BYSECOND=0`,
              durationMinutes: minutes,
              timezone: 'UTC',
            },
          };
          const t = startsMs + probeOffsetMs;
          // Reference: occurrences are every day at hh:mm:00.000 from starts_at's whole second
          // on (RFC 5545 times have no milliseconds; seed -1082460805: starts_at at
          // 23:59:59.981, a window at 00:00 and a probe at 00:00:00.000).
          let expected = false;
          const firstDay = Math.floor(startsMs / dayMs) * dayMs;
          for (let day = firstDay; day <= t; day += dayMs) {
            const occurrence = day + hour * hourMs + minute * minuteMs;
            // An occurrence in starts_at's own second counts, clipped to starts_at below (seed
            // -1109968032: starts_at at 00:00:00.001 and a window from 00:00:00).
            if (occurrence < Math.floor(startsMs / 1000) * 1000) continue;
            if (occurrence >= endsMs) break;
            if (occurrence <= t && t < occurrence + minutes * minuteMs) expected = true;
          }
          expected = expected && t >= startsMs && t < endsMs;
          expect(silenceActiveAt(schedule, t)).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('floating times', () => {
  it('round-trip through a zone for any instant outside a repeated hour', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: at('2020-01-01T00:00:00Z'), max: at('2035-01-01T00:00:00Z') }),
        fc.constantFrom(
          'Europe/Berlin',
          'America/New_York',
          'Australia/Lord_Howe',
          'Asia/Kolkata',
          'UTC',
        ),
        (instant, zone) => {
          const floating = toFloating(instant, zone);
          const back = fromFloating(floating, zone);
          // In a repeated (fall-back) hour the wall time maps to its first instant.
          expect(back === instant || (back < instant && toFloating(back, zone) === floating)).toBe(
            true,
          );
        },
      ),
    );
  });
});

describe('recurrenceProblem', () => {
  it.each([
    ['FREQ=WEEKLY;BYDAY=SU;BYHOUR=2', 'Europe/Berlin'],
    ['RRULE:FREQ=DAILY;INTERVAL=2', 'UTC'],
    ['FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12', 'America/New_York'],
  ])('accepts %j in %s', (rrule, timezone) => {
    expect(recurrenceProblem({ rrule, timezone })).toBeUndefined();
  });

  it.each([
    ['FREQ=SOMETIMES', 'UTC', 'rrule'],
    ['BYHOUR=2', 'UTC', 'rrule'],
    ['not a rule', 'UTC', 'rrule'],
    ['DTSTART:20260101T000000Z\nRRULE:FREQ=DAILY', 'UTC', 'rrule'],
    ['FREQ=DAILY', 'Mars/Olympus_Mons', 'timezone'],
    ['FREQ=DAILY', '', 'timezone'],
  ])('refuses %j in %j at %s', (rrule, timezone, field) => {
    expect(recurrenceProblem({ rrule, timezone })?.[0]).toBe(field);
  });
});

describe('silenceMatches', () => {
  const target = {
    host: 'web-1',
    serviceId: 'svc_1',
    ruleId: 'rul_1',
    severity: 'critical',
    tags: { env: 'prod', region: 'eu' },
  };

  it('matches when every given matcher matches, tags by every pair', () => {
    expect(silenceMatches({ host: 'web-1' }, target)).toBe(true);
    expect(silenceMatches({ host: 'web-1', severity: 'critical' }, target)).toBe(true);
    expect(silenceMatches({ tags: { env: 'prod', region: 'eu' } }, target)).toBe(true);
    expect(silenceMatches({ serviceId: 'svc_1', ruleId: 'rul_1' }, target)).toBe(true);
  });

  it('does not match when any given matcher differs', () => {
    expect(silenceMatches({ host: 'web-2' }, target)).toBe(false);
    expect(silenceMatches({ host: 'web-1', severity: 'warning' }, target)).toBe(false);
    expect(silenceMatches({ tags: { env: 'prod', team: 'core' } }, target)).toBe(false);
    expect(silenceMatches({ ruleId: 'rul_2' }, target)).toBe(false);
    expect(silenceMatches({ tags: { toString: 'x' } }, target)).toBe(false);
  });
});
