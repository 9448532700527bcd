/**
 * A bounded in-process cache: each entry expires at its own time, and the least recently
 * used entry is evicted when full (a Map keeps insertion order; a hit re-inserts). With
 * `staleMs`, an expired entry is kept that much longer for `getStale`: the last answer, for
 * when its source cannot be asked (stale-if-error, RFC 5861).
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  /** `lookups`: told of every hit and miss (e.g. to count them in a metric). */
  constructor(
    private readonly maxEntries = 10_000,
    private readonly lookups?: { hit(): void; miss(): void },
    private readonly staleMs = 0,
  ) {}

  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt <= now) {
      if (entry && entry.expiresAt + this.staleMs <= now) this.entries.delete(key);
      this.lookups?.miss();
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.lookups?.hit();
    return entry.value;
  }

  /** The entry's value, expired or not, while within its `staleMs` after expiry. */
  getStale(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt + this.staleMs > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: K, value: V, ttlMs: number, now = Date.now()): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as K;
      this.entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (used when a notice names a user or key). */
  deleteWhere(match: (value: V, key: K) => boolean): number {
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (match(entry.value, key)) {
        this.entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Concurrent look-ups of the same key share one call (no RPC stampede on a cold cache). */
export function singleFlight<K, V>() {
  const inflight = new Map<K, Promise<V>>();
  return (key: K, load: () => Promise<V>): Promise<V> => {
    const running = inflight.get(key);
    if (running) return running;
    const p = load().finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  };
}
