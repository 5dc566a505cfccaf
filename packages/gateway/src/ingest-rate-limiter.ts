import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from '@monitor/platform';
import { rateLimited, sendProblem } from '@monitor/platform';
import type { AuthenticatedKey } from './api-key-authenticator.js';
import type { IngestRateLimiter } from './ingest-handler.js';

const windowMs = 60_000;
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
  const keys = new WeakMap<IncomingMessage, AuthenticatedKey>();
  const answered = new WeakMap<IncomingMessage, () => void>();
  let lastStoreErrorLogMs = 0;
  const store = options.redis === undefined ? undefined : createRedisStore(options.redis);

  const limiter = rateLimit({
    windowMs,
    limit: options.limitPerMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: `${options.limitPerMinute}-per-minute`,
    keyGenerator: (req) => keys.get(req)?.keyId ?? 'unknown',
    passOnStoreError: true,
    // Its checks assume express's req.ip and trust-proxy settings, which a per-key limit ignores.
    validate: false,
    ...(store === undefined ? {} : { store }),
    handler: (req, res) => {
      const retryAfterSeconds = Number(res.getHeader('Retry-After')) || 60;
      res.setHeader('Connection', 'close');
      sendProblem(res, rateLimited(retryAfterSeconds));
      answered.get(req)?.();
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

  return (req, res, key) => {
    keys.set(req, key);
    (res as ServerResponse & { append?: typeof appendHeader }).append ??= appendHeader;
    return new Promise((resolve, reject) => {
      answered.set(req, () => resolve('answered'));
      // express-rate-limit is express middleware; on node:http it needs only `res.append` from
      // express (added above), so the hot path stays off express.
      void limiter(req as Request, res as Response, (err?: unknown) => {
        if (err) reject(err instanceof Error ? err : new Error('rate limiter failed'));
        else resolve('allowed');
      });
    });
  };
}

/** express's `res.append`, the one express addition the draft-8 headers need. */
function appendHeader(
  this: ServerResponse,
  name: string,
  value: string | string[],
): ServerResponse {
  const previous = this.getHeader(name);
  const values = [
    ...(previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)]),
    ...(Array.isArray(value) ? value : [value]),
  ];
  return this.setHeader(name, values.length === 1 ? values[0]! : values);
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
