import { randomBytes } from 'node:crypto';
import { rateLimitDecisions } from '../metrics.js';
import type { Logger } from '@support-desk/platform';
import type { Redis } from 'ioredis';

/**
 * Sliding-window log, one atomic script per call, time from Redis (`TIME`), so any number of
 * replicas sharing Redis admit at most `limit` calls in any window of `window` ms. Only
 * admitted calls are logged (a client hammering while limited does not extend its own
 * penalty). The key always gets a TTL of one window.
 *
 * With ARGV[4] = '0' the call is only checked, not logged: a budget that counts a call only once
 * its outcome is known (an authenticated client, a failed authentication) is checked before
 * and logged after.
 *
 * Returns {allowed, remaining, resetAtMs, nowMs}: resetAtMs is when the oldest logged call
 * leaves the window, i.e. when at least one more call will be admitted.
 */
const SLIDING_WINDOW = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  allowed = 1
  if ARGV[4] ~= '0' then
    redis.call('ZADD', key, now, now .. ':' .. ARGV[3])
    count = count + 1
  end
end
local reset = now + window
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window end
if count > 0 then redis.call('PEXPIRE', key, window) end
return {allowed, limit - count, reset, now}
`;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds (integer) when at least one more call is admitted. */
  resetAt: number;
  /** Seconds until then (≥ 1 when refused). */
  retryAfter: number;
  windowSeconds: number;
}

export interface RateLimiterOptions {
  redis: Redis;
  prefix: string;
  windowSeconds: number;
  failureMode: 'fail-open' | 'fail-closed';
  logger: Logger;
}

export class RateLimitUnavailableError extends Error {}

/** The bucket is the key's first segment (`general:key:…`, `auth:ip:…`): a fixed word. */
function countDecision(key: string, plan: string, decision: string) {
  rateLimitDecisions.inc({ bucket: key.slice(0, key.indexOf(':')), plan, decision });
}

export function createRateLimiter({ redis, prefix, windowSeconds, failureMode, logger }: RateLimiterOptions) {
  const instance = randomBytes(4).toString('hex');
  let seq = 0;
  const stats = { failOpen: 0, failClosed: 0 };
  redis.defineCommand('sdSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
  const run = (
    redis as unknown as Record<string, (...a: string[]) => Promise<number[]>>
  ).sdSlidingWindow.bind(redis);

  return {
    stats,
    windowSeconds,
    /**
     * Counts one call against `key` (or, with `record: false`, only says whether one more would
     * be admitted). Returns null when Redis is unavailable and the mode is fail-open (logged and
     * counted); throws RateLimitUnavailableError when fail-closed.
     */
    async take(
      key: string,
      limit: number,
      { record = true, plan = 'none' }: { record?: boolean; plan?: string } = {},
    ): Promise<RateDecision | null> {
      seq = (seq + 1) % 1_000_000_000;
      let result: number[];
      try {
        result = await run(
          `${prefix}${key}`,
          String(limit),
          String(windowSeconds * 1000),
          `${instance}:${seq}`,
          record ? '1' : '0',
        );
      } catch (err) {
        if (failureMode === 'fail-closed') {
          stats.failClosed++;
          if (record) countDecision(key, plan, 'limiter_error_fail_closed');
          logger.error(
            { err: (err as Error).message, failClosed: stats.failClosed },
            'rate limiter unavailable; refusing',
          );
          throw new RateLimitUnavailableError('rate limiter unavailable');
        }
        stats.failOpen++;
        if (record) countDecision(key, plan, 'limiter_error_fail_open');
        logger.warn(
          { err: (err as Error).message, failOpen: stats.failOpen },
          'rate limiter unavailable; admitting',
        );
        return null;
      }
      const [allowed, remaining, resetMs, nowMs] = result.map(Number);
      if (record) countDecision(key, plan, allowed === 1 ? 'admitted' : 'limited');
      return {
        allowed: allowed === 1,
        limit,
        remaining: Math.max(0, remaining),
        resetAt: Math.ceil(resetMs / 1000),
        retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
        windowSeconds,
      };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** X-RateLimit-* and the IETF RateLimit-Policy / RateLimit fields (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(policy: string, d: RateDecision): Record<string, string> {
  const secondsToReset = Math.max(0, d.resetAt - Math.floor(Date.now() / 1000));
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetAt),
    'ratelimit-policy': `"${policy}";q=${d.limit};w=${d.windowSeconds}`,
    ratelimit: `"${policy}";r=${d.remaining};t=${secondsToReset}`,
  };
}
