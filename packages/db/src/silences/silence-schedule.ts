import { createRequire } from 'node:module';
import type * as RRuleModule from 'rrule';
import type { SilenceMatchers, SilenceRecurrence, SilenceState } from '@monitor/schemas';

/**
 * When a silence is in force: pure functions of the silence and an instant (no clock is read
 * here), shared by the API (`state`, an alert's `silenced`) and the notifier (suppression).
 *
 * A one-off silence is in force on [starts_at, ends_at). A recurring one (a maintenance window)
 * is in force for `duration_minutes` from each occurrence of its RRULE, DTSTART = starts_at,
 * counting only occurrences in [starts_at, ends_at) and never past ends_at. RRULE local times
 * (`BYHOUR`…) are wall-clock times in `timezone`.
 *
 * Time zones: rrule's own `tzid` option gives results that depend on the process's time zone
 * (it returns wall times as if they were the host's local time), so it is not used. Instead
 * rrule runs on "floating" dates, as its documentation recommends: wall-clock times of the
 * silence's zone carried in the UTC fields of a Date, which rrule computes on without any zone.
 * Converting between floating and real instants is done here with Intl. A wall time that a
 * spring-forward gap skips maps to the instant the gap's length later (02:30 → 03:30), one that
 * a fall-back repeats maps to its first occurrence (as Temporal's `compatible`).
 */

// rrule ships CommonJS (a webpack bundle) whose exports Node's ESM loader cannot name.
const { RRule } = createRequire(import.meta.url)('rrule') as typeof RRuleModule;

/** The parts of a silence its schedule depends on. */
export type SilenceSchedule = {
  startsAt: Date;
  endsAt: Date;
  recurrence: SilenceRecurrence | null;
};

const minuteMs = 60_000;
const dayMs = 24 * 60 * minuteMs;

/** Whether the silence is in force at `atMs` (epoch ms). */
export function silenceActiveAt(silence: SilenceSchedule, atMs: number): boolean {
  const startsMs = silence.startsAt.getTime();
  const endsMs = silence.endsAt.getTime();
  if (atMs < startsMs || atMs >= endsMs) return false;
  const { recurrence } = silence;
  if (recurrence === null) return true;
  const durationMs = recurrence.durationMinutes * minuteMs;
  const rule = recurrenceRule(recurrence, silence.startsAt);
  // Occurrences that could cover atMs start within durationMs before it. Offsets are under a
  // day, so a day's margin each side of the floating window catches every candidate.
  const atFloating = toFloating(atMs, recurrence.timezone);
  const candidates = rule.between(
    new Date(atFloating - durationMs - dayMs),
    new Date(atFloating + dayMs),
    true,
  );
  // The rule starts at starts_at's whole second (see recurrenceRule): an occurrence in that
  // second counts, and is in force from starts_at on (the first check above).
  const startsSecondMs = Math.floor(startsMs / 1000) * 1000;
  return candidates.some((occurrence) => {
    const occurrenceMs = fromFloating(occurrence.getTime(), recurrence.timezone);
    return (
      occurrenceMs >= startsSecondMs &&
      occurrenceMs < endsMs &&
      occurrenceMs <= atMs &&
      atMs < occurrenceMs + durationMs
    );
  });
}

/** `active` while in force, `expired` from ends_at on, else `pending` (not yet, or between windows). */
export function silenceStateAt(silence: SilenceSchedule, atMs: number): SilenceState {
  if (atMs >= silence.endsAt.getTime()) return 'expired';
  return silenceActiveAt(silence, atMs) ? 'active' : 'pending';
}

/**
 * Why a recurrence cannot be stored, as `[field, message]`, or undefined when it can: the RRULE
 * must parse (RFC 5545 RRULE part only: no DTSTART, it is `starts_at`) and the zone must be an
 * IANA zone this runtime knows.
 */
export function recurrenceProblem(
  recurrence: Pick<SilenceRecurrence, 'rrule' | 'timezone'>,
): ['rrule' | 'timezone', string] | undefined {
  if (!isTimeZone(recurrence.timezone)) {
    return ['timezone', 'must be an IANA time zone such as Europe/Berlin'];
  }
  const text = recurrence.rrule.replace(/^RRULE:/i, '');
  if (/(^|[\s;])(DTSTART|TZID)\b/i.test(text) || /[\r\n]/.test(text)) {
    return ['rrule', 'must be an RRULE only (DTSTART is starts_at, the zone is timezone)'];
  }
  try {
    const options = RRule.parseString(text);
    if (options.freq === undefined) {
      return [
        'rrule',
        'must set FREQ to YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY or SECONDLY',
      ];
    }
    // Building the rule and asking for one occurrence checks the values, not just the syntax.
    new RRule({ ...options, dtstart: new Date(0) }).after(new Date(0), true);
  } catch (err) {
    return ['rrule', `is not a valid RFC 5545 RRULE (${(err as Error).message})`];
  }
  return undefined;
}

/**
 * The rule with DTSTART at starts_at's whole second: RFC 5545 times have no milliseconds, and
 * rrule carries DTSTART's into every occurrence, so a daily `BYHOUR=0;BYMINUTE=0;BYSECOND=0` of
 * a silence created at 23:59:59.981 would start each night at 00:00:00.981.
 */
function recurrenceRule(recurrence: SilenceRecurrence, startsAt: Date): RRuleModule.RRule {
  const options = RRule.parseString(recurrence.rrule.replace(/^RRULE:/i, ''));
  const startsFloatingMs = toFloating(startsAt.getTime(), recurrence.timezone);
  return new RRule({
    ...options,
    dtstart: new Date(Math.floor(startsFloatingMs / 1000) * 1000),
    tzid: null,
  });
}

function isTimeZone(zone: string): boolean {
  if (zone.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The wall-clock time of the instant in the zone, as epoch ms of those fields read as UTC. */
export function toFloating(instantMs: number, zone: string): number {
  const parts = new Map<string, number>();
  for (const part of formatterOf(zone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') parts.set(part.type, Number(part.value));
  }
  const field = (name: string): number => {
    const value = parts.get(name);
    if (value === undefined) throw new Error(`toFloating: Intl gave no ${name}`);
    return value;
  };
  const wholeSecondMs = Date.UTC(
    field('year'),
    field('month') - 1,
    field('day'),
    field('hour'),
    field('minute'),
    field('second'),
  );
  return wholeSecondMs + (((instantMs % 1000) + 1000) % 1000);
}

/** The zone's offset from UTC at the instant, in ms (+3 600 000 for CET). */
function offsetAt(instantMs: number, zone: string): number {
  return toFloating(instantMs, zone) - instantMs;
}

/** The instant of a wall-clock time of the zone (floating ms); see the module comment for gaps. */
export function fromFloating(floatingMs: number, zone: string): number {
  const offsets = new Set([offsetAt(floatingMs - dayMs, zone), offsetAt(floatingMs + dayMs, zone)]);
  const valid = [...offsets]
    .map((offset) => floatingMs - offset)
    .filter((instant) => offsetAt(instant, zone) === floatingMs - instant)
    .sort((a, b) => a - b);
  if (valid[0] !== undefined) return valid[0];
  // In a gap: the offset before the transition carries the wall time past it.
  return floatingMs - offsetAt(floatingMs - dayMs, zone);
}

/** The facts of an alert a silence's matchers are compared with. */
export type SilenceTarget = {
  host: string;
  serviceId: string;
  ruleId: string;
  severity: string;
  /** The service's tags. */
  tags: Readonly<Record<string, string>>;
};

/** Whether every given matcher matches the alert (tags: every pair). */
export function silenceMatches(matchers: SilenceMatchers, target: SilenceTarget): boolean {
  if (matchers.host !== undefined && matchers.host !== target.host) return false;
  if (matchers.serviceId !== undefined && matchers.serviceId !== target.serviceId) return false;
  if (matchers.ruleId !== undefined && matchers.ruleId !== target.ruleId) return false;
  if (matchers.severity !== undefined && matchers.severity !== target.severity) return false;
  if (matchers.tags !== undefined) {
    for (const [key, value] of Object.entries(matchers.tags)) {
      if (!Object.hasOwn(target.tags, key) || target.tags[key] !== value) return false;
    }
  }
  return true;
}
