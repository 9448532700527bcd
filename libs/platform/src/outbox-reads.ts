import type { Model } from 'mongoose';
import { OUTBOX_MINUTE_FIELD } from './outbox.js';
import type { NotedWrite } from './outbox-pending.js';
import type { PendingDoc } from './outbox-sweep.js';

/**
 * How the store answers a read by `_id`, decided once from the store itself: MongoDB answers an
 * `$in` from its index ('in'); FerretDB pushes down `{_id: X}` but never an `$in`, which decodes
 * the whole collection (at 1,000 requests: 340 ms on SQLite, 940 ms on PostgreSQL, against 5-20 ms
 * per read by `_id`). On PostgreSQL, which pushes down a second equality too (its `explain`
 * says so), reads by `_id` always cost less ('by-id'); on SQLite, whose reads by `_id` cost more
 * and grow with the collection, past a few reads one `$in` does ('by-id-few').
 */
export type NotedReads = 'in' | 'by-id' | 'by-id-few';
/** On SQLite, noted documents read by `_id` up to this many a batch; more with one `$in`. */
const BY_ID_READS_MAX = 16;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
export async function notedReadsOf(model: Model<any> | undefined): Promise<NotedReads> {
  const db = model?.db.db;
  const info = await db
    ?.admin()
    .command({ buildInfo: 1 })
    .catch(() => null);
  if (!db || !info || !('ferretdbVersion' in info)) return 'in';
  const probe = { find: model.collection.collectionName, filter: { _id: '', [OUTBOX_MINUTE_FIELD]: '' } };
  const plan = await db.command({ explain: probe }).catch(() => null);
  return plan?.filterPushdown === true ? 'by-id' : 'by-id-few';
}

/** The noted documents' outboxes, read as `mode` says. */
async function readNoted(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  model: Model<any>,
  ids: unknown[],
  mode: NotedReads,
): Promise<PendingDoc[]> {
  const projection = { projection: { outbox: 1 } };
  if (mode === 'in' || (mode === 'by-id-few' && ids.length > BY_ID_READS_MAX)) {
    return (await model.collection.find({ _id: { $in: ids } } as never, projection).toArray()) as never;
  }
  const docs: PendingDoc[] = [];
  for (const id of ids) {
    const doc = await model.collection.findOne({ _id: id } as never, projection);
    if (doc) docs.push(doc as unknown as PendingDoc);
  }
  return docs;
}

/**
 * The noted writes' pending entries: as noted when this process knows them (no read: the write
 * that added them answered that it applied), read from the store as `mode` says otherwise.
 */
export async function pendingDocsOf(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  model: Model<any>,
  writes: NotedWrite[],
  mode: NotedReads,
): Promise<PendingDoc[]> {
  const known: PendingDoc[] = [];
  const unknown: unknown[] = [];
  for (const write of writes) {
    if (write.entries) known.push({ _id: write.id, outbox: write.entries });
    else unknown.push(write.id);
  }
  return unknown.length === 0 ? known : [...known, ...(await readNoted(model, unknown, mode))];
}
