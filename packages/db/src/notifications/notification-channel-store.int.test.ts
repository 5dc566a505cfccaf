// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { NotificationChannelStore } from './notification-channel-store.js';
import { createNotificationChannelStore } from './notification-channel-store.js';
import { createOrgStore } from '../orgs/org-store.js';
import { migratedDatabase } from '../testing/clean-database.js';

describe('notification channel store', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: NotificationChannelStore;
  let orgId: string;
  let otherOrgId: string;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'notification_channels'));
    store = createNotificationChannelStore(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('acme')).id;
    otherOrgId = (await orgs.createOrganization('other')).id;
  });

  afterAll(async () => {
    await dispose();
  });

  it('stores a target, replaces it keeping created_at, and lists per organization', async () => {
    const first = await store.putChannel(orgId, 'webhook', {
      url: 'https://a.example/hook',
      secret: 'whsec-0123456789abcdef',
    });
    expect(first).toMatchObject({
      orgId,
      type: 'webhook',
      config: { url: 'https://a.example/hook', secret: 'whsec-0123456789abcdef' },
    });
    const replaced = await store.putChannel(orgId, 'webhook', {
      url: 'https://b.example/hook',
      secret: 'whsec-fedcba9876543210',
    });
    expect(replaced.config).toEqual({
      url: 'https://b.example/hook',
      secret: 'whsec-fedcba9876543210',
    });
    expect(replaced.createdAt).toEqual(first.createdAt);
    expect(replaced.updatedAt.getTime()).toBeGreaterThanOrEqual(first.updatedAt.getTime());

    await store.putChannel(orgId, 'email', { to: ['ops@example.com'], from: 'm@example.com' });
    await store.putChannel(otherOrgId, 'slack', { webhook_url: 'https://hooks.example/x' });
    expect((await store.listChannels(orgId)).map((c) => c.type)).toEqual(['email', 'webhook']);
    expect((await store.listChannels(otherOrgId)).map((c) => c.type)).toEqual(['slack']);
    expect(await store.getChannel(orgId, 'email')).toMatchObject({
      config: { to: ['ops@example.com'], from: 'm@example.com' },
    });
    expect(await store.getChannel(orgId, 'slack')).toBeUndefined();
  });

  it('deletes only the organization’s own target', async () => {
    await store.putChannel(orgId, 'slack', { webhook_url: 'https://hooks.example/mine' });
    expect(await store.deleteChannel(otherOrgId, 'email')).toBe(false);
    expect(await store.deleteChannel(orgId, 'slack')).toBe(true);
    expect(await store.deleteChannel(orgId, 'slack')).toBe(false);
    expect(await store.getChannel(orgId, 'slack')).toBeUndefined();
    expect(await store.getChannel(otherOrgId, 'slack')).toBeDefined();
  });
});
