import { addressKey, TtlCache } from '@support-desk/platform/core';
import type { RateDecision, RateLimiter } from '../store/rate-limiter.js';

export interface AuthFailureThrottleOptions {
  limiter: RateLimiter | null;
  /** Failed authentications one address (an IPv6 /64) may make per rate-limit window. */
  limit: number;
}

/**
 * Failed `/v1` authentications are counted per client address in Redis (shared by every
 * replica): past the limit, that address gets 429 until its window frees, without another
 * credential look-up. Only failures are counted, so the happy path costs one in-process
 * look-up; a replica learns of a block at the first failure it sees after the limit.
 */
export function createAuthFailureThrottle({ limiter, limit }: AuthFailureThrottleOptions) {
  const blocked = new TtlCache<string, RateDecision>(100_000);
  return {
    /** The refusal in force for this address, if any. */
    blockedFor(ip: string | undefined): RateDecision | undefined {
      // Nearly always nothing is blocked: then the address is not even parsed.
      return blocked.size === 0 ? undefined : blocked.get(addressKey(ip));
    },
    /** Counts a failure; returns the refusal when this address is now over its limit. */
    async recordFailure(ip: string | undefined): Promise<RateDecision | undefined> {
      if (!limiter) return undefined;
      const address = addressKey(ip);
      const decision = await limiter.take(`authfail:${address}`, limit).catch(() => null);
      if (!decision || decision.allowed) return undefined;
      blocked.set(address, decision, decision.retryAfter * 1000);
      return decision;
    },
  };
}

export type AuthFailureThrottle = ReturnType<typeof createAuthFailureThrottle>;
