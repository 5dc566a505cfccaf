/** The window of the per-key ingest rate limit. */
export const rateLimitWindowSeconds = 60;

/** The name of the ingest rate-limit policy in both headers: `"6000-per-minute"`. */
export function rateLimitPolicyName(limitPerMinute: number): string {
  return `${limitPerMinute}-per-minute`;
}

/** `RateLimit` (IETF draft-8) as sent: the policy, requests left, seconds until the reset. */
export function formatRateLimit(
  policyName: string,
  remaining: number,
  resetSeconds: number,
): string {
  return `"${policyName}"; r=${remaining}; t=${resetSeconds}`;
}

/**
 * `RateLimit-Policy` (IETF draft-8) as sent: the policy, its quota and window, and the partition
 * key (base64 of the first 12 hex digits of the SHA-256 of the key's id, never the key itself).
 */
export function formatRateLimitPolicy(
  policyName: string,
  limit: number,
  partitionKey: string,
): string {
  return `"${policyName}"; q=${limit}; w=${rateLimitWindowSeconds}; pk=:${partitionKey}:`;
}

/** What the two headers look like, for the OpenAPI document (and tests of what is sent). */
export const rateLimitHeaderPatterns = {
  RateLimit: '^"[0-9]+-per-minute"; r=[0-9]+; t=[0-9]+$',
  'RateLimit-Policy': `^"[0-9]+-per-minute"; q=[0-9]+; w=${rateLimitWindowSeconds}; pk=:[A-Za-z0-9+/]+=*:$`,
} as const;
