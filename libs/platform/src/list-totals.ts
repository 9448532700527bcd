import { LIST_TOTAL_CAP } from '@support-desk/contracts';
import {
  type HourWalkBudget,
  type HourWalkReads,
  type HourWalkResult,
  type WalkFeedback,
  type WalkStep,
  walkHours,
} from './hour-walk.js';
import { TtlCache } from './ttl-cache.js';

/**
 * Page-mode totals kept for a moment (issues 31 and 37). A page's total is counted up to the cap
 * (`LIST_COUNT_LIMIT`) by walking the list's steps (`walkHours`), and on the local store each
 * count decodes every document it counts: up to 1,001 per call, every call (10,000 requests
 * stored, the unfiltered first page spent 190 of its 310 ms counting, `status=open&priority=high`
 * 47 of 110). So a count is kept per list filter for `ttlMs` in the process: the next pages of
 * that filter (the usual way a client pages) and the same first page again count nothing, and
 * their walk stops once the page is full. Which counts are kept:
 * - a capped one (`totalCapped`: past the cap, or stopped at its steps' bound), in every list:
 *   it is a lower bound, which items added since keep true; it may lag the writes of those
 *   seconds, as the answer's `totalCapped` already says it is not exact;
 * - an exact one only where the list says so (`exact`: the users lists, whose writes through this
 *   process `forget` every kept count; another replica's writes show within `ttlMs`).
 * `ttlMs` 0: every page counts.
 */
export function createListTotals(
  ttlMs: number,
  { exact = false }: { exact?: boolean } = {},
  maxEntries = 1000,
) {
  const kept = new TtlCache<string, KeptTotal>(maxEntries);
  return {
    /** The count of the filter `key` made within `ttlMs`, if any. */
    get: (key: string): KeptTotal | undefined => (ttlMs > 0 ? kept.get(key) : undefined),
    /** Keeps a whole count a walk made (not one it cut at its budget), if this list keeps that kind. */
    keep(key: string, total: KeptTotal): void {
      if (exact || isCapped(total)) kept.set(key, total, ttlMs);
    },
    /** This process wrote to the collection: every count may be off. */
    forget: () => kept.clear(),
  };
}

export type ListTotals = ReturnType<typeof createListTotals>;

/** A count kept: its value and whether it stopped at its steps' bound (a lower bound). */
interface KeptTotal {
  total: number;
  stopped: boolean;
}

const isCapped = (kept: KeptTotal) => kept.stopped || kept.total > LIST_TOTAL_CAP;

/** A filter's key in `ListTotals`: its fields and values (the sort counts the same documents). */
export const totalKeyOf = (filter: object): string =>
  JSON.stringify(filter, (_, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );

/**
 * `walkHours` with the filter's kept count: a page-mode walk uses the count kept for `key` (and
 * stops once its page is full), or keeps the one it makes. A caller whose count must be exact up
 * to the cap (`countStepsPastPage: Infinity`, SCIM's `totalResults`) never takes a stopped one.
 * A stopped count depends on where the page that made it ended, so one kept for a short page
 * serves a longer one as a lower bound too, unless that page reaches the list's end.
 */
export async function walkWithKeptTotal<D, S extends WalkStep & { day?: true }>(
  totals: ListTotals,
  key: string,
  steps: Generator<S, void, WalkFeedback | undefined>,
  window: Parameters<typeof walkHours>[1],
  reads: HourWalkReads<D, S>,
  budget: HourWalkBudget,
): Promise<HourWalkResult<D>> {
  const kept = window.count ? totals.get(key) : undefined;
  if (kept && !(kept.stopped && window.countStepsPastPage === Infinity)) {
    const found = await walkHours(steps, { ...window, knownTotal: kept.total }, reads, budget);
    if (!kept.stopped) return found;
    // A page that is not full read the list to its end: its place says the exact count.
    const ended = found.docs.length < window.limit && !found.stoppedAt;
    if (ended && (found.docs.length > 0 || window.skip === 0))
      return { ...found, total: window.skip + found.docs.length };
    // Still a lower bound; a page past it raises it.
    const total = Math.max(kept.total, window.skip + found.docs.length);
    return { ...found, total, countStopped: true };
  }
  const found = await walkHours(steps, window, reads, budget);
  if (window.count && !found.stoppedAt)
    totals.keep(key, { total: found.total, stopped: found.countStopped === true });
  return found;
}
