import { rateLimitDecisions } from '../metrics.js';
import type { Logger } from '@support-desk/platform/core';
import { RefusalMemory } from './refusal-memory.js';
import { createSlidingWindowBatch, type RateDecision } from './sliding-window-batch.js';
import { type RedisClient, slotOf } from './redis-client.js';

export type { RateDecision } from './sliding-window-batch.js';

export interface RateLimiterOptions {
  redis: RedisClient;
  prefix: string;
  windowSeconds: number;
  failureMode: 'fail-open' | 'fail-closed';
  logger: Logger;
}

export class RateLimitUnavailableError extends Error {}

/** One labelled counter per (bucket, plan, decision): a Map hit instead of hashing labels per call. */
const decisionCounters = new Map<string, { inc(): void }>();

/** The bucket is the key's first segment (`general:key:…`, `auth:ip:…`): a fixed word. */
function countDecision(key: string, plan: string, decision: string) {
  const bucket = key.slice(0, key.indexOf(':'));
  const id = `${bucket}|${plan}|${decision}`;
  let counter = decisionCounters.get(id);
  if (!counter) {
    counter = rateLimitDecisions.labels({ bucket, plan, decision });
    decisionCounters.set(id, counter);
  }
  counter.inc();
}

/**
 * `<bucket>:<subject>` → `<bucket>:{<subject>}`: the braces are a Redis Cluster hash tag, so every
 * bucket of one credential or address lies in one slot and the calls of one client in one turn
 * share a script call on a Cluster as on a single server. (Keys were untagged before issue 36:
 * across an upgrade the old keys simply expire, so each limit starts afresh once.)
 */
const redisKeyOf = (key: string) => {
  const colon = key.indexOf(':');
  return `${key.slice(0, colon + 1)}{${key.slice(colon + 1)}}`;
};

/**
 * Sliding-window log in Redis (see `sliding-window-script.ts`): any number of replicas sharing
 * Redis admit at most `limit` calls in any window. The calls of one event-loop turn share one
 * script call (`sliding-window-batch.ts`), and a key Redis refused is refused here without a
 * round trip until the earliest instant Redis could admit again (`refusal-memory.ts`), which
 * can only refuse what Redis would refuse.
 */
export function createRateLimiter({ redis, prefix, windowSeconds, failureMode, logger }: RateLimiterOptions) {
  const stats = { failOpen: 0, failClosed: 0, refusedLocally: 0 };
  const refusals = new RefusalMemory();
  const batch = createSlidingWindowBatch(redis, windowSeconds, refusals, slotOf(redis));

  function unavailable(err: unknown, key: string, plan: string, record: boolean): null {
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

  return {
    stats,
    windowSeconds,
    /**
     * Counts one call against `key` (or, with `record: false`, only says whether one more would
     * be admitted); `weight`: the call takes that many units, all or nothing. Returns null when Redis is unavailable and the mode is fail-open (logged and
     * counted); throws RateLimitUnavailableError when fail-closed.
     */
    async take(
      key: string,
      limit: number,
      { record = true, plan = 'none', weight = 1 }: { record?: boolean; plan?: string; weight?: number } = {},
    ): Promise<RateDecision | null> {
      const fullKey = prefix + redisKeyOf(key);
      const known = refusals.refusal(fullKey, limit);
      if (known) {
        stats.refusedLocally++;
        if (record) countDecision(key, plan, 'limited');
        return {
          allowed: false,
          limit,
          remaining: 0,
          resetAt: known.resetAt,
          // `until` is ≤ 1 ms before Redis' reset: the same whole seconds as Redis would say.
          retryAfter: Math.min(
            windowSeconds,
            Math.max(1, Math.ceil((known.until + 1 - performance.now()) / 1000)),
          ),
          windowSeconds,
        };
      }
      let decision: RateDecision;
      try {
        decision = await batch.decide(fullKey, limit, record, weight);
      } catch (err) {
        return unavailable(err, key, plan, record);
      }
      if (record) countDecision(key, plan, decision.allowed ? 'admitted' : 'limited');
      return decision;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * X-RateLimit-* and the IETF RateLimit-Policy / RateLimit fields (draft-ietf-httpapi-ratelimit-headers).
 * `t` is the decision's own seconds to reset (`retryAfter`, from the limiter's clock): never more
 * than the window `w`, and on a 429 exactly `Retry-After`. (Taken as `X-RateLimit-Reset` minus
 * this second, it was one too many whenever the reset fell in a later second than the call's.)
 */
export function rateLimitHeaders(policy: string, d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetAt),
    'ratelimit-policy': `"${policy}";q=${d.limit};w=${d.windowSeconds}`,
    ratelimit: `"${policy}";r=${d.remaining};t=${d.retryAfter}`,
  };
}
