import { randomBytes } from 'node:crypto';

/**
 * An organization id no other test uses (`org_test_<hex>` unless `prefix` says otherwise), for
 * data written straight into storage: tests sharing a database then never see each other's.
 */
export function uniqueOrgId(prefix = 'org_test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}
