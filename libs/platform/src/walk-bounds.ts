import type { Connection, Model } from 'mongoose';
import { bucketStart, dayKey, HOUR_MS } from './time-buckets.js';

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
  /**
   * A counted span's items per day (`dayKey` → about how many; `countedWalk` in hour-walk.ts):
   * a day holding an item always has its key, and the number is a hint, never less than 1 and
   * off by the few a process has not written yet, lost $inc's (FerretDB's are not atomic) and
   * items deleted or moved since (never taken off): it chooses a walk's steps, never what a list
   * answers.
   */
  days?: Record<string, number>;
}

interface SpanDocument {
  _id: string;
  oldest?: Date;
  newest?: Date;
  days?: Record<string, number>;
}

/** A process writes a counted span's day counts at least every this many items (and at every new hour). */
const DAY_COUNTS_FLUSH = 16;

export function walkBounds(conn: Connection) {
  const collection = conn.collection<SpanDocument>(WALK_BOUNDS_COLLECTION);
  // The span each list's document holds at least (this process widened it so far): no write within it.
  const widened = new Map<string, WalkSpan>();
  // A counted span's items per day this process stored and has not written yet, and the days it wrote.
  const unwritten = new Map<string, Map<string, number>>();
  const writtenDays = new Map<string, Set<string>>();

  const write = (list: string, span: WalkSpan, days?: Map<string, number>, exact?: boolean) =>
    collection.updateOne(
      { _id: list },
      {
        $min: { oldest: new Date(span.oldest) },
        $max: {
          newest: new Date(span.newest),
          // Found by reading every item (`edges`): at least that many, whoever wrote first.
          ...(exact && days ? Object.fromEntries([...days].map(([d, n]) => [`days.${d}`, n])) : {}),
        },
        ...(!exact && days?.size
          ? { $inc: Object.fromEntries([...days].map(([d, n]) => [`days.${d}`, n])) }
          : {}),
      },
      { upsert: true },
    );

  /**
   * Items of `list` are (about to be) stored at these times (epoch ms). `counted`: the list keeps
   * its items per day too (written with the span, or once `DAY_COUNTS_FLUSH` are due).
   */
  async function stored(list: string, times: readonly number[], counted = false): Promise<void> {
    if (times.length === 0) return;
    const span = {
      oldest: bucketStart(
        times.reduce((a, b) => Math.min(a, b)),
        HOUR_MS,
      ),
      newest: bucketStart(
        times.reduce((a, b) => Math.max(a, b)),
        HOUR_MS,
      ),
    };
    const days = counted ? (unwritten.get(list) ?? new Map<string, number>()) : undefined;
    for (const t of counted ? times : []) days!.set(dayKey(t), (days!.get(dayKey(t)) ?? 0) + 1);
    const known = widened.get(list);
    const inside = known && span.oldest >= known.oldest && span.newest <= known.newest;
    const written = writtenDays.get(list) ?? new Set<string>();
    // A day without its key yet is written before the item is stored: the walk reads only days with a key.
    const due =
      days &&
      ([...days.keys()].some((d) => !written.has(d)) ||
        [...days.values()].reduce((a, b) => a + b, 0) >= DAY_COUNTS_FLUSH);
    if (inside && !due) {
      if (days) unwritten.set(list, days);
      return;
    }
    unwritten.delete(list);
    try {
      await write(list, span, days);
    } catch (err) {
      // Two first writes at once: one inserted the document, the other now updates it.
      if ((err as { code?: unknown }).code !== 11000) throw err;
      await write(list, span, days);
    }
    if (days) writtenDays.set(list, new Set([...written, ...days.keys()]));
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
     * before spans were kept, or straight into the store), `edges` finds it, once; a counted
     * span (`counted`) without its day counts too (`edges` then counts its items per day).
     */
    async read(
      list: string,
      edges: () => Promise<WalkSpan | undefined>,
      counted = false,
    ): Promise<WalkSpan | undefined> {
      const doc = await collection.findOne({ _id: list });
      if (doc?.oldest && doc.newest && (!counted || doc.days))
        return {
          oldest: doc.oldest.getTime(),
          newest: doc.newest.getTime(),
          ...(doc.days ? { days: doc.days } : {}),
        };
      const found = await edges();
      if (found) {
        const days = found.days ? new Map(Object.entries(found.days)) : undefined;
        await write(list, found, days, true);
        widened.delete(list);
      }
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
 * last document (two reads of the whole collection on FerretDB); `counted` spans (the users
 * lists') keep their documents per day too, found then by one read of every document's time.
 */
export function timedSpans<D extends Timed>(
  conn: Connection,
  documents: Model<D>,
  list: string,
  { counted = false }: { counted?: boolean } = {},
) {
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
    if (counted) {
      const all = await documents
        .find({}, { [field]: 1 })
        .lean<Timed[]>()
        .exec();
      if (all.length === 0) return undefined;
      const times = all.map((d) => d[field].getTime());
      const days: Record<string, number> = {};
      for (const t of times) days[dayKey(t)] = (days[dayKey(t)] ?? 0) + 1;
      return {
        oldest: times.reduce((a, b) => Math.min(a, b)),
        newest: times.reduce((a, b) => Math.max(a, b)),
        days,
      };
    }
    const [oldest, newest] = await Promise.all([edge(field, 1), edge(field, -1)]);
    return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
  };
  return {
    /** A document was stored (`created`: its creation time) or changed at these times. */
    async stored(created: Date | undefined, updated: Date): Promise<void> {
      if (created) await bounds.stored(list, [created.getTime()], counted);
      await bounds.stored(idOf('updatedAt'), [updated.getTime()], counted);
    },
    /** The span of `field` over the stored documents, or undefined when none is stored. */
    read: (field: keyof Timed): Promise<WalkSpan | undefined> =>
      bounds.read(idOf(field), edges(field), counted),
  };
}
