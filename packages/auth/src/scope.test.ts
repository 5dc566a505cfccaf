import { describe, expect, it } from 'vitest';
import { hasScope } from './scope.js';

describe('hasScope', () => {
  it('allows a scope the key holds and refuses one it lacks', () => {
    const key = { scopes: ['ingest', 'read'] as const };
    expect(hasScope(key, 'read')).toBe(true);
    expect(hasScope(key, 'write')).toBe(false);
  });
});
