import { outsideCall } from './call-deadline.js';
import type { OutboxEntry } from './outbox-entry.js';

/**
 * A written aggregate whose outbox may hold entries. `entries` are the ones this process's writes
 * added, in write order, when every write noted since the last take is known to have applied them
 * (so the relay publishes them without reading the document back); null when the relay must read
 * the document (a write of unknown outcome, a failed publish put back, an outbox set whole).
 */
export interface NotedWrite {
  id: unknown;
  entries: OutboxEntry[] | null;
  /** When the first of its writes still noted was (epoch ms): the age of what waits for the relay. */
  notedAt: number;
}

/**
 * Written aggregates with possibly pending entries, per collection (keyed by `collectionKey`:
 * database and name), so relays in this process publish them by id right away instead of waiting
 * for a scan (a scan is a full collection read on FerretDB). Writes from other processes are found
 * by the relay's periodic sweep.
 */
const pendingByCollection = new Map<string, Map<string, NotedWrite>>();
/** Called on every note (relays in this process wake on them). */
export const pendingListeners = new Set<() => void>();

/**
 * Notes a write without waking the relays. Entries of successive writes of one aggregate add up in
 * order (writes of one aggregate are queued behind its lock, so they are noted in commit order);
 * one write without known entries makes the relay read the document, which holds them all.
 */
export function notePendingQuietly(collection: string, id: unknown, entries: OutboxEntry[] | null = null) {
  let noted = pendingByCollection.get(collection);
  if (!noted) {
    noted = new Map();
    pendingByCollection.set(collection, noted);
  }
  const key = String(id);
  const earlier = noted.get(key);
  if (!earlier) noted.set(key, { id, entries: entries && [...entries], notedAt: Date.now() });
  else if (earlier.entries && entries) earlier.entries.push(...entries);
  else earlier.entries = null;
}

export function notePending(collection: string, id: unknown, entries: OutboxEntry[] | null = null) {
  if (id === undefined || id === null) return;
  notePendingQuietly(collection, id, entries);
  // The relays' passes are background work, not the writing call's.
  outsideCall(() => {
    for (const listener of pendingListeners) listener();
  });
}

/**
 * What waits for the relays of this process in a collection: the entries of its noted writes (a
 * write whose entries are unknown counts one) and when the oldest was noted (null: none). Read at
 * metrics scrape time: a burst of writes waits here, not yet read by any relay pass.
 */
export function notedTotals(collection: string): { entries: number; oldest: number | null } {
  let entries = 0;
  let oldest: number | null = null;
  for (const write of pendingByCollection.get(collection)?.values() ?? []) {
    entries += write.entries?.length ?? 1;
    if (oldest === null || write.notedAt < oldest) oldest = write.notedAt;
  }
  return { entries, oldest };
}

/** Up to `max` noted writes of a collection (the rest stay noted); `more` when some are left. */
export function takePending(collection: string, max: number): { writes: NotedWrite[]; more: boolean } {
  const noted = pendingByCollection.get(collection);
  if (!noted || noted.size === 0) return { writes: [], more: false };
  const writes: NotedWrite[] = [];
  for (const [key, write] of noted) {
    if (writes.length === max) break;
    writes.push(write);
    noted.delete(key);
  }
  return { writes, more: noted.size > 0 };
}

/**
 * Drops published entries from a still-noted write of the document: the sweep can publish a
 * write's entries before the relay takes its note (both are this process's), and the note would
 * publish them again.
 */
export function forgetPublished(collection: string, id: unknown, published: OutboxEntry[]) {
  const noted = pendingByCollection.get(collection);
  const write = noted?.get(String(id));
  if (!noted || !write?.entries) return;
  const sent = new Set(published.map((e) => e.id));
  write.entries = write.entries.filter((e) => !sent.has(e.id));
  if (write.entries.length === 0) noted.delete(String(id));
}
