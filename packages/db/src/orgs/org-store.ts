import { newId } from '@monitor/platform';
import type { Database } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';

type Organization = { id: string; name: string; createdAt: Date };

export type OrgStore = {
  /** Creates an organization with a new `org_…` id. */
  createOrganization(name: string): Promise<Organization>;
  /** The organization, or undefined when there is none with this id. */
  getOrganization(id: string): Promise<Organization | undefined>;
  /** Every organization, oldest first. */
  listOrganizations(): Promise<Organization[]>;
  /** The default organization (for MONITOR_BOOTSTRAP_API_KEY), created on first call. Idempotent. */
  ensureDefaultOrganization(): Promise<Organization>;
};

/** The id of the default organization: a fixed, well-formed `org_` id that sorts first. */
export const defaultOrganizationId = 'org_00000000000000000000000000';
const defaultOrganizationName = 'default';

type OrganizationRow = { id: string; name: string; created_at: Date };

export function createOrgStore(db: Database): OrgStore {
  const { sql } = db;
  return {
    async createOrganization(name) {
      const rows = await sql<OrganizationRow[]>`
        insert into organizations (id, name) values (${newId('org')}, ${name})
        returning id, name, created_at
      `;
      return toOrganization(expectRow(rows, 'insert into organizations'));
    },
    async getOrganization(id) {
      const [row] = await sql<OrganizationRow[]>`
        select id, name, created_at from organizations where id = ${id}
      `;
      return row === undefined ? undefined : toOrganization(row);
    },
    async listOrganizations() {
      const rows = await sql<OrganizationRow[]>`
        select id, name, created_at from organizations order by created_at, id
      `;
      return rows.map(toOrganization);
    },
    async ensureDefaultOrganization() {
      await sql`
        insert into organizations (id, name)
        values (${defaultOrganizationId}, ${defaultOrganizationName})
        on conflict (id) do nothing
      `;
      const rows = await sql<OrganizationRow[]>`
        select id, name, created_at from organizations where id = ${defaultOrganizationId}
      `;
      return toOrganization(expectRow(rows, 'select the default organization'));
    },
  };
}

function toOrganization(row: OrganizationRow): Organization {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}
