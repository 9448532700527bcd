import type { Connection, Model } from 'mongoose';
import { bucketStart, HOUR_MS } from './time-buckets.js';

/**
 * The known time span of a list's hour walk (hour-walk.ts) when it is one oldest and one newest
 * time per list: the audit log's events, one webhook subscription's deliveries. A walk starts at
 * the newest hour that holds an item (not at an empty "now") and ends at the oldest, so quiet
 * stretches before and after cost nothing. Each span is one small document of `listBounds` read
 * by `_id` per list call; the inserts widen it before they write (`$min`/`$max`, known to the
 * hour, once per new hour per process: an item is never stored outside its span). Items stored
 * before a span was kept are found once, by the caller's `edges` (a read of them all), when its
 * document is missing. Lists that walk a creation or a change time keep a span of each
 * (`timedSpans`, below).
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

/** The stored times a creation-and-change span pair follows. */
interface Timed {
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The spans of a collection whose lists walk its creation or its change time (requests, users):
 * `<list>` over `createdAt` and `<list>.updated` over `updatedAt`, each a `walkBounds` span.
 * Missing (documents stored before spans were kept), each is found once by its field's first and
 * last document (two reads of the whole collection on FerretDB).
 */
export function timedSpans<D extends Timed>(conn: Connection, documents: Model<D>, list: string) {
  const bounds = walkBounds(conn);
  const idOf = (field: keyof Timed) => (field === 'createdAt' ? list : `${list}.updated`);
  const edge = async (field: keyof Timed, direction: 1 | -1) => {
    const [doc] = await documents
      .find({}, { [field]: 1 })
      .sort({ [field]: direction })
      .limit(1)
      .lean<Timed[]>()
      .exec();
    return doc?.[field].getTime();
  };
  const edges = (field: keyof Timed) => async (): Promise<WalkSpan | undefined> => {
    const [oldest, newest] = await Promise.all([edge(field, 1), edge(field, -1)]);
    return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
  };
  return {
    /** A document was stored (`created`: its creation time) or changed at these times. */
    async stored(created: Date | undefined, updated: Date): Promise<void> {
      if (created) await bounds.stored(list, [created.getTime()]);
      await bounds.stored(idOf('updatedAt'), [updated.getTime()]);
    },
    /** The span of `field` over the stored documents, or undefined when none is stored. */
    read: (field: keyof Timed): Promise<WalkSpan | undefined> => bounds.read(idOf(field), edges(field)),
  };
}
