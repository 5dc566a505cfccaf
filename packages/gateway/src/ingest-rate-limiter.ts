import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { AuthenticatedKey } from '@monitor/auth';
import type { Logger } from '@monitor/platform';
import { rateLimited } from '@monitor/platform';
import {
  formatRateLimit,
  formatRateLimitPolicy,
  rateLimitPolicyName,
  rateLimitWindowSeconds,
} from '@monitor/schemas';
import type { IngestRateLimiter } from './write-admission.js';
import { refuseAfterDrain } from './refuse-after-drain.js';

const windowMs = rateLimitWindowSeconds * 1000;

/** Bound of the per-key cache of `RateLimit-Policy` values (keys are authenticated: few). */
const maxCachedPolicies = 10_000;
const storeErrorLogIntervalMs = 10_000;

/**
 * Per-key limit of ingest requests per minute with express-rate-limit. With `redis`, the count
 * lives in Redis, so every gateway replica shares it; without, it is per process (embedded mode).
 * When Redis fails, requests pass (fail open: losing samples is worse than over-admitting them),
 * counted by `onStoreError` and logged at most every 10 s.
 */
export function createIngestRateLimiter(options: {
  limitPerMinute: number;
  redis?: Redis;
  logger: Logger;
  onStoreError: () => void;
}): IngestRateLimiter {
  // Per request while the limiter decides, deleted once it has. A WeakMap's values are strong in
  // V8's young-generation GC: a value that reached its request (a closure over it) kept every
  // request alive until a full GC (a quarter of the gateway's busy time, the 1-host profile).
  const keys = new WeakMap<IncomingMessage, AuthenticatedKey>();
  const answered = new WeakMap<IncomingMessage, (outcome: 'answered') => void>();
  let lastStoreErrorLogMs = 0;
  const store = options.redis === undefined ? undefined : createRedisStore(options.redis);
  const identifier = rateLimitPolicyName(options.limitPerMinute);
  const policies = new Map<string, string>();

  /**
   * The draft-8 `RateLimit` and `RateLimit-Policy` headers, exactly as express-rate-limit's
   * `standardHeaders: 'draft-8'` writes them, but with the policy (and the SHA-256 of its
   * partition key) computed once per key instead of once per request: profiled, express-rate-
   * limit's header code cost more than its store call.
   */
  function setRateLimitHeaders(res: ServerResponse, info: RateLimitInfo): void {
    if (res.headersSent) return;
    let policy = policies.get(info.key);
    if (policy === undefined) {
      const partitionKey = Buffer.from(
        createHash('sha256').update(info.key).digest('hex').slice(0, 12),
      ).toString('base64');
      policy = formatRateLimitPolicy(identifier, info.limit, partitionKey);
      if (policies.size >= maxCachedPolicies) policies.clear();
      policies.set(info.key, policy);
    }
    const resetSeconds = secondsUntil(info.resetTime);
    res.setHeader('RateLimit', formatRateLimit(identifier, info.remaining, resetSeconds));
    res.setHeader('RateLimit-Policy', policy);
  }

  const limiter = rateLimit({
    windowMs,
    limit: options.limitPerMinute,
    // Written by setRateLimitHeaders (the same draft-8 headers, cheaper), and Retry-After too.
    standardHeaders: false,
    legacyHeaders: false,
    identifier,
    keyGenerator: (req) => keys.get(req)?.keyId ?? 'unknown',
    passOnStoreError: true,
    // Its checks assume express's req.ip and trust-proxy settings, which a per-key limit ignores.
    validate: false,
    ...(store === undefined ? {} : { store }),
    handler: (req, res) => {
      const info = rateLimitInfo(req);
      if (info !== undefined) setRateLimitHeaders(res, info);
      const retryAfterSeconds = secondsUntil(info?.resetTime) || rateLimitWindowSeconds;
      void refuseAfterDrain(req, res, rateLimited(retryAfterSeconds)).then(() => {
        answered.get(req)?.('answered');
        forget(req);
      });
    },
    logger: {
      error(err: unknown) {
        options.onStoreError();
        const now = Date.now();
        if (now - lastStoreErrorLogMs >= storeErrorLogIntervalMs) {
          lastStoreErrorLogMs = now;
          options.logger.warn(
            { err },
            'rate-limit store unavailable: admitting ingest requests unlimited',
          );
        }
      },
      warn(message: unknown) {
        options.logger.warn({ detail: message }, 'rate limiter warning');
      },
    },
  });

  function forget(req: IncomingMessage): void {
    keys.delete(req);
    answered.delete(req);
  }

  return (req, res, key) => {
    keys.set(req, key);
    return new Promise((resolve, reject) => {
      // The promise's own resolve function: it holds no reference to the request.
      answered.set(req, resolve);
      // express-rate-limit is express middleware; without its own headers it needs nothing of
      // express on node:http, so the hot path stays off express.
      void limiter(req as Request, res as Response, (err?: unknown) => {
        forget(req);
        if (err) {
          reject(err instanceof Error ? err : new Error('rate limiter failed'));
          return;
        }
        // No info when the store failed (the request passes unlimited): no headers then.
        const info = rateLimitInfo(req);
        if (info !== undefined) setRateLimitHeaders(res, info);
        resolve('allowed');
      });
    });
  };
}

/** Whole seconds until the window resets, as express-rate-limit counts them. */
function secondsUntil(resetTime: Date | undefined): number {
  if (resetTime === undefined) return rateLimitWindowSeconds;
  return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/** What express-rate-limit left on the request (`requestPropertyName`, default `rateLimit`). */
function rateLimitInfo(req: IncomingMessage): RateLimitInfo | undefined {
  return (req as IncomingMessage & { rateLimit?: RateLimitInfo }).rateLimit;
}

function createRedisStore(redis: Redis): RedisStore {
  const store = new RedisStore({
    prefix: 'monitor:ingest-rate:',
    sendCommand: (command: string, ...args: string[]) =>
      redis.call(command, ...args) as Promise<number | string>,
  });
  // The store loads its scripts at construction and again on first use after a failure; a Redis
  // that is down at start must not turn into an unhandled rejection.
  store.incrementScriptSha.catch(() => undefined);
  store.getScriptSha.catch(() => undefined);
  return store;
}
