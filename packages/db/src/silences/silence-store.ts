import { newId } from '@monitor/platform';
import type { Silence, SilenceMatchers, SilenceRecurrence, SilenceState } from '@monitor/schemas';
import type { Database, Queryable } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';
import { silenceActiveAt, silenceStateAt } from './silence-schedule.js';

type NewSilence = {
  matchers: SilenceMatchers;
  startsAt: Date;
  endsAt: Date;
  comment: string;
  recurrence: SilenceRecurrence | null;
};

export type SilenceStore = {
  /** Stores a new silence of the org, created by the API key `createdBy`. */
  createSilence(orgId: string, createdBy: string, silence: NewSilence): Promise<Silence>;
  /**
   * One page of the org's silences in `state` at `now` (default: active and pending), newest
   * first (id descending), with their number.
   */
  listSilences(query: {
    orgId: string;
    state: SilenceState | undefined;
    now: Date;
    limit: number;
    offset: number;
  }): Promise<{ silences: Silence[]; total: number }>;
  /** The org's silence; undefined for an unknown or another org's one. */
  getSilence(orgId: string, id: string): Promise<Silence | undefined>;
  /**
   * Ends the org's silence at `now` (one not started yet starts and ends then), so it stays
   * listed as expired; an expired one is left as it is. False if there is no such silence.
   */
  expireSilence(orgId: string, id: string, now: Date): Promise<boolean>;
};

type SilenceRow = {
  id: string;
  matchers: StoredMatchers;
  startsAt: Date;
  endsAt: Date;
  comment: string;
  recurrence: StoredRecurrence | null;
  createdAt: Date;
  createdBy: string;
};

/** Matchers as stored: the API's snake_case object. */
type StoredMatchers = {
  host?: string;
  service_id?: string;
  rule_id?: string;
  severity?: SilenceMatchers['severity'];
  tags?: Record<string, string>;
};

type StoredRecurrence = { rrule: string; duration_minutes: number; timezone: string };

const silenceColumns = `id, matchers, starts_at as "startsAt", ends_at as "endsAt", comment,
  recurrence, created_at as "createdAt", created_by as "createdBy"`;

export function storedMatchers(matchers: SilenceMatchers): StoredMatchers {
  return {
    ...(matchers.host === undefined ? {} : { host: matchers.host }),
    ...(matchers.serviceId === undefined ? {} : { service_id: matchers.serviceId }),
    ...(matchers.ruleId === undefined ? {} : { rule_id: matchers.ruleId }),
    ...(matchers.severity === undefined ? {} : { severity: matchers.severity }),
    ...(matchers.tags === undefined ? {} : { tags: matchers.tags }),
  };
}

function toSilence(row: SilenceRow): Silence {
  const { matchers, recurrence } = row;
  return {
    id: row.id,
    matchers: {
      ...(matchers.host === undefined ? {} : { host: matchers.host }),
      ...(matchers.service_id === undefined ? {} : { serviceId: matchers.service_id }),
      ...(matchers.rule_id === undefined ? {} : { ruleId: matchers.rule_id }),
      ...(matchers.severity === undefined ? {} : { severity: matchers.severity }),
      ...(matchers.tags === undefined ? {} : { tags: matchers.tags }),
    },
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    comment: row.comment,
    recurrence:
      recurrence === null
        ? null
        : {
            rrule: recurrence.rrule,
            durationMinutes: recurrence.duration_minutes,
            timezone: recurrence.timezone,
          },
    createdAt: row.createdAt,
    createdBy: row.createdBy,
  };
}

/**
 * The silences in force at `now`: of one organization, or of every organization (the
 * notifier). Only rows not expired by then are read; recurrences are evaluated here.
 */
export async function silencesInForce(
  sql: Queryable,
  now: Date,
  orgId?: string,
): Promise<(Silence & { orgId: string })[]> {
  const rows = await sql<(SilenceRow & { orgId: string })[]>`
    select ${sql.unsafe(silenceColumns)}, org_id as "orgId" from silences
    where ends_at > ${now} and starts_at <= ${now}
      ${orgId === undefined ? sql`` : sql`and org_id = ${orgId}`}
  `;
  return rows
    .map((row) => ({ ...toSilence(row), orgId: row.orgId }))
    .filter((silence) => silenceActiveAt(silence, now.getTime()));
}

/** Silences in table `silences`; whether one is in force is computed by `silence-schedule`. */
export function createSilenceStore(db: Database): SilenceStore {
  const { sql } = db;
  return {
    async createSilence(orgId, createdBy, silence) {
      const recurrence: StoredRecurrence | null =
        silence.recurrence === null
          ? null
          : {
              rrule: silence.recurrence.rrule,
              duration_minutes: silence.recurrence.durationMinutes,
              timezone: silence.recurrence.timezone,
            };
      const rows = await sql<SilenceRow[]>`
        insert into silences (id, org_id, matchers, starts_at, ends_at, comment, recurrence,
          created_by)
        values (${newId('sil')}, ${orgId}, ${JSON.stringify(storedMatchers(silence.matchers))}::text::jsonb,
          ${silence.startsAt}, ${silence.endsAt}, ${silence.comment},
          ${recurrence === null ? null : JSON.stringify(recurrence)}::text::jsonb, ${createdBy})
        returning ${sql.unsafe(silenceColumns)}
      `;
      return toSilence(expectRow(rows, 'insert into silences'));
    },

    async listSilences({ orgId, state, now, limit, offset }) {
      if (state === 'active' || state === 'pending') {
        // Whether a recurring silence is active depends on its rule: the org's unexpired
        // silences are judged here, then paged.
        const rows = await sql<SilenceRow[]>`
          select ${sql.unsafe(silenceColumns)} from silences
          where org_id = ${orgId} and ends_at > ${now}
          order by id desc
        `;
        const matching = rows
          .map(toSilence)
          .filter((silence) => silenceStateAt(silence, now.getTime()) === state);
        return { silences: matching.slice(offset, offset + limit), total: matching.length };
      }
      const filter = state === 'expired' ? sql`and ends_at <= ${now}` : sql`and ends_at > ${now}`;
      const [count] = await sql<{ total: string }[]>`
        select count(*) as total from silences where org_id = ${orgId} ${filter}
      `;
      const rows = await sql<SilenceRow[]>`
        select ${sql.unsafe(silenceColumns)} from silences
        where org_id = ${orgId} ${filter}
        order by id desc
        limit ${limit} offset ${offset}
      `;
      return { silences: rows.map(toSilence), total: Number(count?.total ?? 0) };
    },

    async getSilence(orgId, id) {
      const [row] = await sql<SilenceRow[]>`
        select ${sql.unsafe(silenceColumns)} from silences where id = ${id} and org_id = ${orgId}
      `;
      return row === undefined ? undefined : toSilence(row);
    },

    async expireSilence(orgId, id, now) {
      const [row] = await sql<{ id: string }[]>`
        update silences set
          ends_at = case when ends_at > ${now} then ${now}::timestamptz else ends_at end,
          starts_at = least(starts_at, ${now}::timestamptz)
        where id = ${id} and org_id = ${orgId}
        returning id
      `;
      return row !== undefined;
    },
  };
}
