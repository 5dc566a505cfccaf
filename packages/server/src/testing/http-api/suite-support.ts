import type { Database } from '@monitor/db';
import { addKey, newOrganization } from '../api-target.js';

/** An error answer of the API (RFC 9457), with `errors` on a 422. */
export type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: { path: string; message: string }[];
};

/** Ids of the right form that name nothing. */
export const unknownIds = {
  alert: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
  rule: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
  investigation: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
};

/** A time as the API writes every one: ISO 8601 in UTC, to the millisecond. */
export const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** How long a suite waits for what the roles behind the API do: notify, investigate, store. */
export const backgroundWorkTimeoutMs = 60_000;

/** A new organization's full and read-only keys, and a key of another new organization. */
export async function newOrganizationKeys(db: Database) {
  const org = await newOrganization(db);
  const readKey = await addKey(db, org.orgId, ['read']);
  return { ...org, readKey, otherOrgKey: (await newOrganization(db)).key };
}
