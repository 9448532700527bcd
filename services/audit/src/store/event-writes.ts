import { walkBounds } from '@support-desk/platform/store';
import type { Connection, mongo } from 'mongoose';
import { eventModel, type StoredEvent } from './event-model.js';
import { EVENTS_SPAN } from './event-queries.js';

/** The whole batch failed (database unreachable, timeout): every event in it is retried. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`event store unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

export interface InsertOutcome {
  inserted: number;
  /** Already stored (redelivery, duplicate publish): counts as success. */
  duplicates: number;
  /** Documents the database refused for a reason other than a duplicate key, by batch index. */
  failed: Map<number, Error>;
}

interface BulkWriteErrorLike {
  writeErrors?: { index: number; code?: number; errmsg?: string; err?: { errmsg?: string } }[] | object;
  result?: { insertedCount?: number };
  insertedCount?: number;
}

function writeErrorsOf(err: unknown) {
  const e = err as BulkWriteErrorLike | null;
  if (!e || e.writeErrors === undefined) return undefined;
  // The driver exposes one WriteError or an array depending on count.
  return Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors as { index: number; code?: number }];
}

/**
 * Unordered insert of one batch; the event id is `_id`, so a duplicate-key error means "already
 * stored" and is success. Throws StoreUnavailableError when nothing can be said per document.
 */
export function eventWriter(conn: Connection) {
  // The raw collection typed by our document (ids are strings, not ObjectIds).
  const collection = eventModel(conn).collection as unknown as mongo.Collection<StoredEvent>;
  const bounds = walkBounds(conn);
  return async function insertEvents(docs: StoredEvent[]): Promise<InsertOutcome> {
    const storedAt = new Date();
    for (const d of docs) d.storedAt = storedAt;
    try {
      // The lists' span first (once per new hour): no event is ever stored outside it.
      const times = docs.map((d) => d.timestamp.getTime()).filter((ms) => !Number.isNaN(ms));
      await bounds.stored(EVENTS_SPAN, times);
      const res = await collection.insertMany(docs, { ordered: false });
      return { inserted: res.insertedCount, duplicates: 0, failed: new Map() };
    } catch (err) {
      const writeErrors = writeErrorsOf(err);
      if (!writeErrors || writeErrors.length === 0) throw new StoreUnavailableError(err);
      const failed = new Map<number, Error>();
      let duplicates = 0;
      for (const w of writeErrors) {
        if (w.code === 11000) duplicates++;
        else failed.set(w.index, new Error(`insert refused (code ${w.code}): ${w.errmsg ?? 'unknown'}`));
      }
      return { inserted: docs.length - duplicates - failed.size, duplicates, failed };
    }
  };
}

export type InsertEvents = ReturnType<typeof eventWriter>;
