import type { Connection } from 'mongoose';
import { bucketStart, HOUR_MS } from './time-buckets.js';

/**
 * The known time span of a list's hour walk (hour-walk.ts) when it is one oldest and one newest
 * time per list: the audit log's events, one webhook subscription's deliveries. A walk starts at
 * the newest hour that holds an item (not at an empty "now") and ends at the oldest, so quiet
 * stretches before and after cost nothing. Each span is one small document of `listBounds` read
 * by `_id` per list call; the inserts widen it before they write (`$min`/`$max`, known to the
 * hour, once per new hour per process: an item is never stored outside its span). Items stored
 * before a span was kept are found once, by the caller's `edges` (a read of them all), when its
 * document is missing. (The requests lists keep three times per span: their own list-bounds.ts.)
 */
export const WALK_BOUNDS_COLLECTION = 'listBounds';

/** A walk's span: the oldest and newest stored times (epoch ms, known to the hour). */
export interface WalkSpan {
  oldest: number;
  newest: number;
}

interface SpanDocument {
  _id: string;
  oldest?: Date;
  newest?: Date;
}

export function walkBounds(conn: Connection) {
  const collection = conn.collection<SpanDocument>(WALK_BOUNDS_COLLECTION);
  // The span each list's document holds at least (this process widened it so far): no write within it.
  const widened = new Map<string, WalkSpan>();

  const write = (list: string, span: WalkSpan) =>
    collection.updateOne(
      { _id: list },
      { $min: { oldest: new Date(span.oldest) }, $max: { newest: new Date(span.newest) } },
      { upsert: true },
    );

  /** Items of `list` are (about to be) stored at these times (epoch ms). */
  async function stored(list: string, times: readonly number[]): Promise<void> {
    if (times.length === 0) return;
    const span = {
      oldest: bucketStart(Math.min(...times), HOUR_MS),
      newest: bucketStart(Math.max(...times), HOUR_MS),
    };
    const known = widened.get(list);
    if (known && span.oldest >= known.oldest && span.newest <= known.newest) return;
    try {
      await write(list, span);
    } catch (err) {
      // Two first writes at once: one inserted the document, the other now updates it.
      if ((err as { code?: unknown }).code !== 11000) throw err;
      await write(list, span);
    }
    widened.set(
      list,
      known
        ? { oldest: Math.min(known.oldest, span.oldest), newest: Math.max(known.newest, span.newest) }
        : span,
    );
  }

  return {
    stored,

    /**
     * The span of `list`, or undefined when it holds nothing. Without its document (items stored
     * before spans were kept, or straight into the store), `edges` finds it, once.
     */
    async read(list: string, edges: () => Promise<WalkSpan | undefined>): Promise<WalkSpan | undefined> {
      const doc = await collection.findOne({ _id: list });
      if (doc?.oldest && doc.newest) return { oldest: doc.oldest.getTime(), newest: doc.newest.getTime() };
      const found = await edges();
      if (found) await stored(list, [found.oldest, found.newest]);
      return found;
    },
  };
}

export type WalkBounds = ReturnType<typeof walkBounds>;
