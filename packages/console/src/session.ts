/**
 * The API key lives in `sessionStorage` only (never localStorage, a cookie or a URL): it is gone
 * when the tab closes, and other tabs do not see it.
 */
const storageKey = 'monitor.api_key';

export function readApiKey(): string | undefined {
  return sessionStorage.getItem(storageKey) ?? undefined;
}

export function storeApiKey(key: string): void {
  sessionStorage.setItem(storageKey, key);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(storageKey);
}
