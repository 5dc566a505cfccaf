/** What a key may do: `ingest` (POST /ingest), `read` (every GET), `write` (changes). */
export type Scope = 'ingest' | 'read' | 'write';

/**
 * Whether an authenticated key may act in `scope`: the one scope check of every role (each
 * answers a `false` with its own 403).
 */
export function hasScope(key: { scopes: readonly Scope[] }, scope: Scope): boolean {
  return key.scopes.includes(scope);
}
