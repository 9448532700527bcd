import { cacheLookups } from '../metrics.js';

/**
 * A bounded in-process cache: each entry expires at its own time, and the least recently
 * used entry is evicted when full (a Map keeps insertion order; a hit re-inserts).
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private readonly hit?: () => void;
  private readonly miss?: () => void;

  /** `name`: count hits and misses in gateway_cache_lookups_total{cache=name}. */
  constructor(
    private readonly maxEntries = 10_000,
    name?: string,
  ) {
    if (name) {
      const hits = cacheLookups.labels({ cache: name, result: 'hit' });
      const misses = cacheLookups.labels({ cache: name, result: 'miss' });
      this.hit = () => hits.inc();
      this.miss = () => misses.inc();
    }
  }

  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt <= now) {
      if (entry) this.entries.delete(key);
      this.miss?.();
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hit?.();
    return entry.value;
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
