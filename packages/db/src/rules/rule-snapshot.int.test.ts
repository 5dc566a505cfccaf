// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueOrgId } from '@monitor/testkit/builders';
import type { Database } from '../core/database.js';
import { loadLiveRules, ruleSetFingerprint } from './rule-snapshot.js';
import { migratedDatabase } from '../testing/clean-database.js';

describe('rule snapshot', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const orgA = uniqueOrgId('org_a');
  const orgB = uniqueOrgId('org_b');

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'rule_snapshot'));
    await db.sql`insert into organizations (id, name) values (${orgA}, 'a'), (${orgB}, 'b')`;
  });

  afterAll(async () => {
    await dispose?.();
  });

  async function insertRule(id: string, orgId: string, extra = ''): Promise<void> {
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels, scope)
      values (${id}, ${orgId}, ${`${id} ${extra}`.trim()}, 'cpu_percent', 'greater_than_or_equal',
        85.5, 5, 'warning', ${db.sql.array(['slack', 'webhook'])}, ${'{"env":"prod"}'}::text::jsonb)
    `;
  }

  it('loads every enabled, non-deleted rule of every organization in the domain shape', async () => {
    await insertRule('rul_1', orgA);
    await insertRule('rul_2', orgB);
    await insertRule('rul_3', orgA);
    await db.sql`update alert_rules set enabled = false where id = 'rul_3'`;
    await insertRule('rul_4', orgA);
    await db.sql`update alert_rules set deleted_at = now() where id = 'rul_4'`;
    expect((await loadLiveRules(db)).rules).toEqual([
      {
        id: 'rul_1',
        orgId: orgA,
        name: 'rul_1',
        metric: 'cpu_percent',
        condition: 'greater_than_or_equal',
        threshold: 85.5,
        durationMinutes: 5,
        severity: 'warning',
        channels: ['slack', 'webhook'],
        scope: { env: 'prod' },
        generation: 0,
        recoveryThreshold: null,
        keepFiringForMinutes: 0,
        noDataMinutes: null,
        noDataState: 'alerting',
        renotifyMinutes: null,
        messageTemplate: null,
        flapping: null,
      },
      expect.objectContaining({ id: 'rul_2', orgId: orgB }),
    ]);
  });

  it('reads the fields of migration 17 in the domain shape', async () => {
    await insertRule('rul_0', orgA);
    await db.sql`
      update alert_rules set recovery_threshold = 70.25, keep_firing_for_minutes = 10,
        no_data_minutes = 15, no_data_state = 'keep', renotify_minutes = 60,
        message_template = '{{host}} is {{status}}',
        flapping = '{"window_minutes": 30, "max_transitions": 4}'::jsonb
      where id = 'rul_0'
    `;
    const [rule] = (await loadLiveRules(db)).rules.filter((live) => live.id === 'rul_0');
    expect(rule).toMatchObject({
      recoveryThreshold: 70.25,
      keepFiringForMinutes: 10,
      noDataMinutes: 15,
      noDataState: 'keep',
      renotifyMinutes: 60,
      messageTemplate: '{{host}} is {{status}}',
      flapping: { windowMinutes: 30, maxTransitions: 4 },
    });
    await db.sql`delete from alert_rules where id = 'rul_0'`;
  });

  it('reads the epoch with the rules', async () => {
    expect((await loadLiveRules(db)).epoch).toBe(0);
    await db.sql`update alert_rule_epoch set generation = 42`;
    expect((await loadLiveRules(db)).epoch).toBe(42);
  });

  it('changes the fingerprint on insert, update, soft delete and hard delete, and only then', async () => {
    const seen = [await ruleSetFingerprint(db)];
    const expectChanged = async () => {
      const next = await ruleSetFingerprint(db);
      expect(seen).not.toContain(next);
      seen.push(next);
    };
    expect(await ruleSetFingerprint(db)).toBe(seen[0]);
    await insertRule('rul_5', orgB);
    await expectChanged();
    // Every change takes a new revision, as the rules API does.
    await db.sql`
      update alert_rules set threshold = 99, revision = nextval('alert_rule_revisions')
      where id = 'rul_5'
    `;
    await expectChanged();
    await db.sql`
      update alert_rules set enabled = false, revision = nextval('alert_rule_revisions')
      where id = 'rul_1'
    `;
    await expectChanged();
    await db.sql`
      update alert_rules set deleted_at = now(), revision = nextval('alert_rule_revisions')
      where id = 'rul_2'
    `;
    await expectChanged();
    await db.sql`delete from alert_rules where id = 'rul_3'`;
    await expectChanged();
    // A generation taken (a checkpoint may carry it) must be reachable by a reload.
    await db.sql`update alert_rule_epoch set generation = generation + 1`;
    await expectChanged();
    expect(await ruleSetFingerprint(db)).toBe(seen[seen.length - 1]);
    expect((await loadLiveRules(db)).rules.map((rule) => [rule.id, rule.threshold])).toEqual([
      ['rul_5', 99],
    ]);
  });
});
