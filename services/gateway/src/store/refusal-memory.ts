/**
 * Keys Redis has just refused, remembered until the earliest instant Redis could admit one
 * more call on them, so a client hammering a spent budget is refused without a round trip.
 * It can only refuse, never admit, and it refuses only what Redis would refuse:
 *
 * - Redis refused because the key's log held `limit` or more calls in the window. Logged calls
 *   only leave the window one by one, the oldest first at `reset`, and new ones can only be
 *   added; the key's TTL outlives its newest entry. So until `reset` (Redis time) the count
 *   stays at or above that limit, and any call with a limit no greater is refused by Redis too.
 *   A call with a greater limit (the plan changed) goes to Redis.
 * - The instant is kept on this process's monotonic clock, measured from when the script call
 *   was sent (before Redis read its clock): `sentAt + (reset - redisNow) - 1 ms` (the 1 ms is
 *   Redis's sub-millisecond part, which its `now` drops) is never later than `reset` in Redis
 *   time. A wall-clock step here changes nothing; only a step of Redis's own clock or a key
 *   deleted by hand would make Redis admit earlier, and then this process refuses for at most
 *   the rest of that window.
 */
export class RefusalMemory {
  private readonly refused = new Map<string, { limit: number; until: number; resetAt: number }>();

  constructor(private readonly maxKeys = 100_000) {}

  /** Redis refused `key` at `limit`; it admits nothing more before `until` (monotonic ms). */
  note(key: string, limit: number, until: number, resetAt: number): void {
    if (this.refused.size >= this.maxKeys) this.forgetPast(performance.now());
    // Full of keys still refused: the newcomer simply goes to Redis again.
    if (this.refused.size >= this.maxKeys) return;
    this.refused.set(key, { limit, until, resetAt });
  }

  /** The remembered refusal in force for a call with this limit now, if any. */
  refusal(key: string, limit: number): { until: number; resetAt: number } | undefined {
    // Nearly always nothing is refused: then not even the clock is read.
    if (this.refused.size === 0) return undefined;
    const entry = this.refused.get(key);
    if (!entry) return undefined;
    if (performance.now() >= entry.until) {
      this.refused.delete(key);
      return undefined;
    }
    return limit <= entry.limit ? entry : undefined;
  }

  get size(): number {
    return this.refused.size;
  }

  private forgetPast(now: number): void {
    for (const [key, entry] of this.refused) if (now >= entry.until) this.refused.delete(key);
  }
}
