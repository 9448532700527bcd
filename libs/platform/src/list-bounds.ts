import type { Connection, Model } from 'mongoose';
import { hourKey } from './time-buckets.js';

/**
 * The known bounds of a list's hour walk (`hourWalk`): the oldest creation time and the newest
 * creation and change times stored in one collection, one small document read by `_id` per list
 * call, so a walk starts at the newest hour that holds a document (not at an empty "now") and
 * ends at the oldest. Inserts and writes widen it before they write (`$min`/`$max`, once an hour
 * per process: a document is never stored outside the bounds); documents stored before it
 * existed are read once, at start (`read` when the document is missing).
 */
export interface ListBounds {
  oldest: Date;
  newestCreated: Date;
  newestUpdated: Date;
}

/** The collection holding the bounds, one document per list (tools that fill the store widen it too). */
export const LIST_BOUNDS_COLLECTION = 'listBounds';

/** What a walked collection's documents hold: their creation and change times. */
interface Timed {
  createdAt: Date;
  updatedAt: Date;
}

interface BoundsDocument {
  _id: string;
  oldest?: Date;
  newestCreated?: Date;
  newestUpdated?: Date;
}

/** The bounds of `documents`' lists, kept in the document `id` (the collection's name). */
export function createListBounds<D extends Timed>(conn: Connection, documents: Model<D>, id: string) {
  const collection = conn.collection<BoundsDocument>(LIST_BOUNDS_COLLECTION);
  // The hours this process has widened the bounds to already: one write per new hour.
  let createdHour = '';
  let updatedHour = '';

  const widen = async (created: Date | undefined, updated: Date) => {
    const write = () =>
      collection.updateOne(
        { _id: id },
        {
          ...(created ? { $min: { oldest: created } } : {}),
          $max: { ...(created ? { newestCreated: created } : {}), newestUpdated: updated },
        },
        { upsert: true },
      );
    try {
      await write();
    } catch (err) {
      // Two first writes at once: one inserted the document, the other now updates it.
      if ((err as { code?: unknown }).code !== 11000) throw err;
      await write();
    }
  };

  /** The first and last of `field` over every stored document (two reads of the whole collection). */
  async function edge(field: keyof Timed, direction: 1 | -1): Promise<Date | undefined> {
    const [doc] = await documents
      .find({}, { [field]: 1 })
      .sort({ [field]: direction })
      .limit(1)
      .lean<Timed[]>()
      .exec();
    return doc?.[field];
  }

  return {
    /** A document was stored (`created`) or changed at these times. */
    async stored(created: Date | undefined, updated: Date): Promise<void> {
      const hours = [created ? hourKey(created) : createdHour, hourKey(updated)] as const;
      if (hours[0] === createdHour && hours[1] === updatedHour) return;
      await widen(created, updated);
      [createdHour, updatedHour] = hours;
    },

    /** The bounds, or undefined when no document is stored. */
    async read(): Promise<ListBounds | undefined> {
      let doc = await collection.findOne({ _id: id });
      if (!doc?.oldest) {
        // Documents stored before the bounds were kept: found once, by reading them all.
        const [oldest, newestCreated, newestUpdated] = await Promise.all([
          edge('createdAt', 1),
          edge('createdAt', -1),
          edge('updatedAt', -1),
        ]);
        if (!oldest || !newestCreated || !newestUpdated) return undefined;
        await widen(oldest, newestUpdated);
        await widen(newestCreated, newestUpdated);
        doc = await collection.findOne({ _id: id });
      }
      if (!doc?.oldest || !doc.newestCreated || !doc.newestUpdated) return undefined;
      return { oldest: doc.oldest, newestCreated: doc.newestCreated, newestUpdated: doc.newestUpdated };
    },
  };
}
