import { TtlCache } from './ttl-cache.js';

/**
 * Page-mode totals kept for a moment (issue 31/37). A page's total is counted up to the cap
 * (`LIST_COUNT_LIMIT`) by walking the list's steps (`walkHours`), and on the local store each
 * count decodes every document it counts: up to 1,001 per call, every call (at 1,000 stored
 * requests the unfiltered page spent most of its 7.9 s on it). So a count is kept per list filter
 * for `ttlMs` in the process: the next pages of that filter (the usual way a client pages) and
 * the same first page again count nothing, and their walk stops once the page is full. The
 * process's own writes to the collection drop every kept count (its next page counts afresh);
 * another replica's writes show within `ttlMs`. `ttlMs` 0: every page counts.
 */
export function createListTotals(ttlMs: number, maxEntries = 1000) {
  const kept = new TtlCache<string, number>(maxEntries);
  return {
    /** The count of the filter `key` made within `ttlMs`, if any. */
    get: (key: string): number | undefined => (ttlMs > 0 ? kept.get(key) : undefined),
    /** Keeps a count the walk made (only a whole one: not when it stopped at its budget). */
    keep: (key: string, total: number) => kept.set(key, total, ttlMs),
    /** This process wrote to the collection: every count may be off. */
    forget: () => kept.clear(),
  };
}

export type ListTotals = ReturnType<typeof createListTotals>;

/** A filter's key in `ListTotals`: its fields and values (the sort counts the same documents). */
export const totalKeyOf = (filter: object): string =>
  JSON.stringify(filter, (_, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
