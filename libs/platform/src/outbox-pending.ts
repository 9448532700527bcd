/**
 * Written aggregates with possibly pending entries, per collection (keyed by `collectionKey`:
 * database and name), so relays in this process
 * publish them by id right away instead of waiting for a scan (a scan is a full collection read on
 * FerretDB). Writes from other processes are found by the relay's periodic scan.
 */
const pendingByCollection = new Map<string, Map<string, unknown>>();
/** Called on every note (relays in this process wake on them). */
export const pendingListeners = new Set<() => void>();

export function notePendingQuietly(collection: string, id: unknown) {
  let ids = pendingByCollection.get(collection);
  if (!ids) {
    ids = new Map();
    pendingByCollection.set(collection, ids);
  }
  ids.set(String(id), id);
}

export function notePending(collection: string, id: unknown) {
  if (id === undefined || id === null) return;
  notePendingQuietly(collection, id);
  for (const listener of pendingListeners) listener();
}

/** Up to `max` noted ids of a collection (the rest stay noted); `more` when some are left. */
export function takePending(collection: string, max: number): { ids: unknown[]; more: boolean } {
  const noted = pendingByCollection.get(collection);
  if (!noted || noted.size === 0) return { ids: [], more: false };
  const ids: unknown[] = [];
  for (const [key, id] of noted) {
    if (ids.length === max) break;
    ids.push(id);
    noted.delete(key);
  }
  return { ids, more: noted.size > 0 };
}
