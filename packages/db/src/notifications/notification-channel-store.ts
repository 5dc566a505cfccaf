import type { Database } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';

/** The channel types the `notification_channels` table accepts. */
export type ChannelType = 'slack' | 'email' | 'webhook' | 'alertmanager';

/** An organization's target of one channel type; `config` was validated by the API. */
export type NotificationChannelRecord = {
  orgId: string;
  type: ChannelType;
  config: Readonly<Record<string, unknown>>;
  createdAt: Date;
  updatedAt: Date;
};

export type NotificationChannelStore = {
  /** Creates or replaces the org's target of `type`; `createdAt` survives a replacement. */
  putChannel(
    orgId: string,
    type: ChannelType,
    config: Readonly<Record<string, unknown>>,
  ): Promise<NotificationChannelRecord>;
  /** The org's target of `type`, or undefined when none is configured. */
  getChannel(orgId: string, type: ChannelType): Promise<NotificationChannelRecord | undefined>;
  /** Every target of the org, ordered by type. */
  listChannels(orgId: string): Promise<NotificationChannelRecord[]>;
  /** Removes the org's target of `type`; false when there was none. */
  deleteChannel(orgId: string, type: ChannelType): Promise<boolean>;
};

type ChannelRow = {
  org_id: string;
  type: ChannelType;
  config: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};

export function createNotificationChannelStore(db: Database): NotificationChannelStore {
  const { sql } = db;
  return {
    async putChannel(orgId, type, config) {
      // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
      const rows = await sql<ChannelRow[]>`
        insert into notification_channels (org_id, type, config)
        values (${orgId}, ${type}, ${JSON.stringify(config)}::text::jsonb)
        on conflict (org_id, type)
          do update set config = excluded.config, updated_at = now()
        returning org_id, type, config, created_at, updated_at
      `;
      return toRecord(expectRow(rows, 'upsert into notification_channels'));
    },
    async getChannel(orgId, type) {
      const [row] = await sql<ChannelRow[]>`
        select org_id, type, config, created_at, updated_at from notification_channels
        where org_id = ${orgId} and type = ${type}
      `;
      return row === undefined ? undefined : toRecord(row);
    },
    async listChannels(orgId) {
      const rows = await sql<ChannelRow[]>`
        select org_id, type, config, created_at, updated_at from notification_channels
        where org_id = ${orgId} order by type
      `;
      return rows.map(toRecord);
    },
    async deleteChannel(orgId, type) {
      const rows = await sql`
        delete from notification_channels where org_id = ${orgId} and type = ${type}
        returning type
      `;
      return rows.length > 0;
    },
  };
}

function toRecord(row: ChannelRow): NotificationChannelRecord {
  return {
    orgId: row.org_id,
    type: row.type,
    config: row.config,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
