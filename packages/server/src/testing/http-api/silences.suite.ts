import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiExchange } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { newOrganization } from '../api-target.js';
import { expectDocumentedAsServed } from '../openapi-conformance.js';
import type { Problem } from './suite-support.js';

type Silence = Record<string, unknown> & { id: string; state: string };

/**
 * Silences over HTTP: one-off and recurring windows, their states, listing and paging, their
 * validation, expiry and isolation between organizations. What a silence does to alerts is in
 * the alerts suite. It works in an organization of its own; every answer is checked against
 * the served OpenAPI document at the end. Call it inside a describe whose beforeAll has set
 * `target`.
 */
export function describeSilencesApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  const call = createApiCall({ baseUrl: () => target().apiUrl, exchanges });

  describe('silences', () => {
    let key: string;

    beforeAll(async () => {
      ({ key } = await newOrganization(target().db));
    });

    const window = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

    it('lists all but expired by default, by state on request, newest first, paged', async () => {
      const make = async (comment: string, from: number, to: number, recurrence?: object) => {
        const created = await call<Silence>('/api/v1/silences', {
          key,
          method: 'POST',
          body: {
            matchers: { severity: 'info', tags: { env: 'lab' } },
            starts_at: window(from),
            ends_at: window(to),
            comment,
            ...(recurrence === undefined ? {} : { recurrence }),
          },
        });
        expect(created.status, comment).toBe(201);
        return created.body;
      };
      const pending = await make('later', 1, 2);
      const active = await make('now', -1, 1);
      const weekly = await make('weekly window', -1, 24 * 30, {
        rrule: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0',
        duration_minutes: 120,
        timezone: 'Europe/Berlin',
      });
      expect(weekly.recurrence).toEqual({
        rrule: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0',
        duration_minutes: 120,
        timezone: 'Europe/Berlin',
      });
      expect(pending.state).toBe('pending');
      expect(active.state).toBe('active');
      const ids = async (query: string) => {
        const listed = await call<{ silences: Silence[]; pagination: { total: number } }>(
          `/api/v1/silences${query}`,
          { key },
        );
        expect(listed.status, query).toBe(200);
        return listed.body.silences.map((silence) => silence.id);
      };
      const all = await ids('');
      expect(all.slice(0, 3)).toEqual([weekly.id, active.id, pending.id]);
      expect(all).not.toContain(undefined);
      expect(await ids('?state=active')).toContain(active.id);
      expect(await ids('?state=pending')).toContain(pending.id);
      expect(await ids('?state=expired')).not.toContain(active.id);
      expect(await ids('?limit=1&offset=1')).toEqual([active.id]);
      const bad = await call<Problem>('/api/v1/silences?state=over&limit=0', { key });
      expect(bad.status).toBe(422);
      expect(bad.body.errors?.map((error) => error.path).sort()).toEqual(['limit', 'state']);
    });

    it('refuses bad silences with 422 naming the field', async () => {
      const base = {
        matchers: { host: 'web-1' },
        starts_at: window(0),
        ends_at: window(1),
        comment: 'x',
      };
      for (const [body, path] of [
        [{ ...base, matchers: {} }, 'matchers'],
        [{ ...base, matchers: { hostname: 'x' } }, 'matchers.hostname'],
        [{ ...base, ends_at: window(-1) }, 'ends_at'],
        [{ ...base, starts_at: 'yesterday' }, 'starts_at'],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=SOMETIMES', duration_minutes: 60, timezone: 'UTC' },
          },
          'recurrence.rrule',
        ],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=DAILY', duration_minutes: 60, timezone: 'Mars/Base' },
          },
          'recurrence.timezone',
        ],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=DAILY', duration_minutes: 10081, timezone: 'UTC' },
          },
          'recurrence.duration_minutes',
        ],
        [{ ...base, matchers: { service_id: 'web-1' } }, 'matchers.service_id'],
      ] as const) {
        const refused = await call<Problem>('/api/v1/silences', { key, method: 'POST', body });
        expect(refused.status, path).toBe(422);
        expect(
          refused.body.errors?.map((error) => error.path),
          path,
        ).toEqual([path]);
      }
    });

    it('is 404 for an unknown, malformed or another organization’s silence', async () => {
      const created = await call<Silence>('/api/v1/silences', {
        key,
        method: 'POST',
        body: { matchers: { host: 'h' }, starts_at: window(0), ends_at: window(1), comment: '' },
      });
      const { key: otherKey } = await newOrganization(target().db, ['read', 'write']);
      for (const path of [
        `/api/v1/silences/${created.body.id}`,
        '/api/v1/silences/sil_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
        '/api/v1/silences/nope',
      ]) {
        expect((await call(path, { key: otherKey })).status, path).toBe(404);
        expect((await call(path, { key: otherKey, method: 'DELETE' })).status, path).toBe(404);
      }
      expect((await call(`/api/v1/silences/${created.body.id}`, { key })).status).toBe(200);
    });

    it('answers only what the served OpenAPI document says', async () => {
      expect(exchanges.length).toBeGreaterThan(15);
      await expectDocumentedAsServed(target().apiUrl, exchanges);
    });
  });
}
