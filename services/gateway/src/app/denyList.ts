import type { Logger } from '@support-desk/platform';
import type { Redis } from 'ioredis';
import { TtlCache } from './ttlCache.js';

/**
 * Users whose access tokens must be refused at once, in Redis so every replica sees an entry
 * written by any of them. Each replica writes the entry when it consumes a `user_deactivated`
 * notice (idempotent); the value records the notice time so a late replica replaying an older
 * notice never overrides a newer reactivation. Entries live as long as the longest access token.
 */
const WRITE_IF_NEWER = `
local current = redis.call('GET', KEYS[1])
if current then
  local at = tonumber(string.match(current, ':(%d+)$'))
  if at and at > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return 1
`;

export interface DenyListOptions {
  redis: Redis;
  prefix: string;
  ttlSeconds: number;
  cacheTtlMs: number;
  logger: Logger;
}

export function createDenyList({ redis, prefix, ttlSeconds, cacheTtlMs, logger }: DenyListOptions) {
  const cache = new TtlCache<string, boolean>(100_000);
  const key = (userId: string) => `${prefix}deny:user:${userId}`;

  async function write(userId: string, state: 'deny' | 'allow', at: string) {
    const atMs = Date.parse(at) || Date.now();
    await redis.eval(WRITE_IF_NEWER, 1, key(userId), state, String(atMs), String(ttlSeconds));
  }

  return {
    async isDenied(userId: string): Promise<boolean> {
      const cached = cache.get(userId);
      if (cached !== undefined) return cached;
      try {
        const value = await redis.get(key(userId));
        const denied = value?.startsWith('deny:') ?? false;
        cache.set(userId, denied, cacheTtlMs);
        return denied;
      } catch (err) {
        // Redis down: identity's user status (cache dropped by the same notice) still refuses.
        logger.warn({ err: (err as Error).message }, 'deny-list unavailable; relying on user status');
        return false;
      }
    },
    async deny(userId: string, at: string) {
      cache.set(userId, true, ttlSeconds * 1000);
      await write(userId, 'deny', at);
    },
    async allow(userId: string, at: string) {
      cache.delete(userId);
      await write(userId, 'allow', at);
    },
  };
}

export type DenyList = ReturnType<typeof createDenyList>;
