import { describe, expect, it } from 'vitest';
import * as published from '../index.js';
import { isTransientDbError } from './classify-db-error.js';
import { createDatabase } from './database.js';

describe('the database package when the server refuses connections', () => {
  it('reports a refused connection as transient', async () => {
    const db = createDatabase({ url: 'postgres://nobody@127.0.0.1:1/none', maxConnections: 1 });
    const error: unknown = await db.ping().catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isTransientDbError(error)).toBe(true);
    // What leaves the package is typed: retriable, a 503 with Retry-After at the API.
    const fromStore: unknown = await published
      .createOrgStore(db)
      .listOrganizations()
      .catch((err: unknown) => err);
    await db.close();
    expect(fromStore).toBeInstanceOf(published.DatabaseUnavailableError);
    expect(fromStore).toMatchObject({ code: 'dependency_unavailable', retriable: true });
    expect((fromStore as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });
});
