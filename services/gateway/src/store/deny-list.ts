import { type Logger, singleFlight, TtlCache } from '@support-desk/platform/core';
import { countedLookups } from './cache-lookups.js';
import type { RedisClient } from './redis-client.js';

/**
 * Users and OAuth grants whose access tokens must be refused at once, in Redis so every replica
 * sees an entry written by any of them. Each replica writes the entry when it consumes the
 * notice (`user_deactivated` → `deny:user:<id>`, `oauth_grant_revoked` → `deny:grant:<gid>`;
 * idempotent). A user entry records the notice time so a late replica replaying an older notice
 * never overrides a newer reactivation; a grant revocation is final. Entries live as long as the
 * longest access token.
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
  redis: RedisClient;
  prefix: string;
  /** The least an entry lives; longer when a notice says its tokens expire later. */
  ttlSeconds: number;
  /** Added to every entry's life: a token is still accepted that long after its `exp`. */
  leewaySeconds: number;
  cacheTtlMs: number;
  logger: Logger;
}

const isDeny = (value: string | null | undefined) => value?.startsWith('deny:') ?? false;

/** Why a token is refused: its user is deactivated, or its grant was revoked. */
export type Denial = 'user' | 'grant' | null;

export function createDenyList({
  redis,
  prefix,
  ttlSeconds,
  leewaySeconds,
  cacheTtlMs,
  logger,
}: DenyListOptions) {
  /**
   * Seconds an entry must live: until the last token it refuses has expired (the notice's
   * `tokensExpireBy`, derived from identity's access-token lifetime), plus the exp leeway; never
   * less than `ttlSeconds` (notices from releases that do not say).
   */
  const ttlFor = (tokensExpireBy: string | undefined) => {
    const untilExpiry = tokensExpireBy ? Math.ceil((Date.parse(tokensExpireBy) - Date.now()) / 1000) : 0;
    return Math.max(ttlSeconds, Number.isFinite(untilExpiry) ? untilExpiry : 0) + leewaySeconds;
  };
  // One cache for both kinds: `u:<userId>` / `g:<grantId>` → denied?
  const cache = new TtlCache<string, boolean>(100_000, countedLookups('deny_list'));
  const flight = singleFlight<string, Denial>();
  // Bumped by every notice: a look-up that started before a notice must not overwrite its entry.
  let generation = 0;
  const userKey = (userId: string) => `${prefix}deny:user:${userId}`;
  const grantKey = (grantId: string) => `${prefix}deny:grant:${grantId}`;

  async function write(userId: string, state: 'deny' | 'allow', at: string, ttl: number) {
    const atMs = Date.parse(at) || Date.now();
    await redis.eval(WRITE_IF_NEWER, 1, userKey(userId), state, String(atMs), String(ttl));
  }

  /** One look-up for whatever is not cached; Redis down → not denied (see `isDenied`). */
  async function lookUp(userId: string, grantId: string | null): Promise<Denial> {
    const started = generation;
    const keys = grantId ? [userKey(userId), grantKey(grantId)] : [userKey(userId)];
    let values: (string | null)[];
    try {
      // GETs, not one MGET: on a Redis Cluster the two keys lie in different slots (auto-pipelining
      // still sends them in one write per node).
      values = await Promise.all(keys.map((key) => redis.get(key)));
    } catch (err) {
      // Redis down: identity's user status (cache dropped by the same notice) still refuses a
      // deactivated user, and a replica that consumed the grant notice keeps its local entry.
      logger.warn({ err: (err as Error).message }, 'deny-list unavailable; relying on user status');
      return null;
    }
    const userDenied = isDeny(values[0]);
    const grantDenied = grantId ? isDeny(values[1]) : false;
    if (started === generation) {
      cache.set(`u:${userId}`, userDenied, cacheTtlMs);
      // A revoked grant stays revoked: keep that answer as long as the Redis entry lives.
      if (grantId)
        cache.set(`g:${grantId}`, grantDenied, grantDenied ? ttlFor(undefined) * 1000 : cacheTtlMs);
    }
    return userDenied ? 'user' : grantDenied ? 'grant' : null;
  }

  return {
    /**
     * Whether the access tokens of this user (and, when the token names one, of this grant) must
     * be refused. Answers from the in-process cache (`DENY_CACHE_TTL_MS`); otherwise one MGET,
     * shared by concurrent calls for the same pair.
     */
    async isDenied(userId: string, grantId: string | null = null): Promise<Denial> {
      const user = cache.get(`u:${userId}`);
      if (user === true) return 'user';
      const grant = grantId ? cache.get(`g:${grantId}`) : false;
      if (grant === true) return 'grant';
      if (user === false && grant === false) return null;
      return flight(grantId ? `${userId} ${grantId}` : userId, () => lookUp(userId, grantId));
    },
    async deny(userId: string, at: string, tokensExpireBy?: string) {
      generation++;
      const ttl = ttlFor(tokensExpireBy);
      cache.set(`u:${userId}`, true, ttl * 1000);
      await write(userId, 'deny', at, ttl);
    },
    async allow(userId: string, at: string, tokensExpireBy?: string) {
      generation++;
      cache.delete(`u:${userId}`);
      await write(userId, 'allow', at, ttlFor(tokensExpireBy));
    },
    /** A revoked grant: refused here at once, and in Redis for every other replica. */
    async denyGrant(grantId: string, at: string, tokensExpireBy?: string) {
      generation++;
      const ttl = ttlFor(tokensExpireBy);
      cache.set(`g:${grantId}`, true, ttl * 1000);
      await redis.set(grantKey(grantId), `deny:${Date.parse(at) || Date.now()}`, 'EX', ttl);
    },
  };
}

export type DenyList = ReturnType<typeof createDenyList>;
