import { cacheLookups } from '../metrics.js';

/** Counts a cache's hits and misses in gateway_cache_lookups_total{cache=name}. */
export function countedLookups(name: string): { hit(): void; miss(): void } {
  const hits = cacheLookups.labels({ cache: name, result: 'hit' });
  const misses = cacheLookups.labels({ cache: name, result: 'miss' });
  return { hit: () => hits.inc(), miss: () => misses.inc() };
}
