import { hourKey } from '@support-desk/platform/core';
import type { Connection, Model } from 'mongoose';
import type { RequestRecord } from './requests.js';

/**
 * The known bounds of the requests lists' hour walk (`hourWalk`): the oldest creation time and
 * the newest creation and change times stored, one small document read by `_id` per list call,
 * so a walk starts at the newest hour that holds a request (not at an empty "now") and ends at
 * the oldest. Inserts and writes widen it before they write (`$min`/`$max`, once an hour per
 * process: a request is never stored outside the bounds); requests
 * stored before it existed are read once, at start (`read` when the document is missing).
 */
export interface ListBounds {
  oldest: Date;
  newestCreated: Date;
  newestUpdated: Date;
}

/** The collection and document holding the bounds (tools that fill the store widen it too). */
const LIST_BOUNDS_COLLECTION = 'listBounds';
const BOUNDS_ID = 'requests';

interface BoundsDocument {
  _id: string;
  oldest?: Date;
  newestCreated?: Date;
  newestUpdated?: Date;
}

export function createListBounds(conn: Connection, requests: Model<RequestRecord>) {
  const collection = conn.collection<BoundsDocument>(LIST_BOUNDS_COLLECTION);
  // The hours this process has widened the bounds to already: one write per new hour.
  let createdHour = '';
  let updatedHour = '';

  const widen = async (created: Date | undefined, updated: Date) => {
    const write = () =>
      collection.updateOne(
        { _id: BOUNDS_ID },
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

  /** The first and last of `field` over every stored request (two reads of the whole collection). */
  async function edge(field: 'createdAt' | 'updatedAt', direction: 1 | -1): Promise<Date | undefined> {
    const [doc] = await requests
      .find({}, { [field]: 1 })
      .sort({ [field]: direction })
      .limit(1)
      .lean<Pick<RequestRecord, 'createdAt' | 'updatedAt'>[]>()
      .exec();
    return doc?.[field];
  }

  return {
    /** A request was stored (`created`) or changed at these times. */
    async stored(created: Date | undefined, updated: Date): Promise<void> {
      const hours = [created ? hourKey(created) : createdHour, hourKey(updated)] as const;
      if (hours[0] === createdHour && hours[1] === updatedHour) return;
      await widen(created, updated);
      [createdHour, updatedHour] = hours;
    },

    /** The bounds, or undefined when no request is stored. */
    async read(): Promise<ListBounds | undefined> {
      let doc = await collection.findOne({ _id: BOUNDS_ID });
      if (!doc?.oldest) {
        // Requests stored before the bounds were kept: found once, by reading them all.
        const [oldest, newestCreated, newestUpdated] = await Promise.all([
          edge('createdAt', 1),
          edge('createdAt', -1),
          edge('updatedAt', -1),
        ]);
        if (!oldest || !newestCreated || !newestUpdated) return undefined;
        await widen(oldest, newestUpdated);
        await widen(newestCreated, newestUpdated);
        doc = await collection.findOne({ _id: BOUNDS_ID });
      }
      if (!doc?.oldest || !doc.newestCreated || !doc.newestUpdated) return undefined;
      return { oldest: doc.oldest, newestCreated: doc.newestCreated, newestUpdated: doc.newestUpdated };
    },
  };
}
