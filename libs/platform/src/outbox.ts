import { Schema } from 'mongoose';
import {
  acquireAggregateLock,
  aggregateKey,
  collectionKey,
  lockStoreOf,
  type NamedCollection,
} from './aggregate-lock.js';
import { minuteKey } from './time-buckets.js';
import type { OutboxEntry } from './outbox-entry.js';
import { notePending } from './outbox-pending.js';

/**
 * Transactional outbox without transactions: pending messages live in an `outbox` array on the
 * aggregate document itself, so the change and the message that announces it are one
 * single-document write. The relay publishes them with `Nats-Msg-Id` = entry id, then removes
 * them. A crash between publish and removal republishes the same id, which JetStream drops as a
 * duplicate inside the stream's duplicate window.
 */

const OutboxEntrySchema = new Schema<OutboxEntry>(
  {
    id: { type: String, required: true },
    subject: { type: String, required: true },
    payload: { type: String, required: true },
    createdAt: { type: Date, required: true },
    traceparent: { type: String },
    tracestate: { type: String },
  },
  { _id: false },
);

/**
 * The minute (`minuteKey`) of a document's latest write that added outbox entries. The relay's
 * safety-net sweep looks for entries another process left pending minute by minute, by equality
 * on this field, instead of decoding every document (see outbox-sweep.ts).
 */
export const OUTBOX_MINUTE_FIELD = 'outboxMinute';

/** Whether an update (or a replacement) writes outbox entries: only those give the relay work. */
function writesOutbox(update: Record<string, unknown> | null): boolean {
  if (!update) return false;
  const push = update.$push as Record<string, unknown> | undefined;
  const set = update.$set as Record<string, unknown> | undefined;
  const replacement = !Object.keys(update).some((key) => key.startsWith('$'));
  return Boolean(push?.outbox || set?.outbox || (replacement && update.outbox));
}

/** Adds the minute to an update that appends outbox entries (`$push: {outbox}`). */
function stampUpdate(update: Record<string, unknown> | null): void {
  const push = update?.$push as Record<string, unknown> | undefined;
  if (!update || !push?.outbox) return;
  update.$set = {
    ...(update.$set as Record<string, unknown> | undefined),
    [OUTBOX_MINUTE_FIELD]: minuteKey(Date.now()),
  };
}

/**
 * An entry as the store holds it: the schema's fields in the schema's order, absent ones left out,
 * so that the relay's `$pullAll` of it (an exact match of the embedded document) removes it.
 */
export function plainEntry(value: unknown): OutboxEntry {
  const e = (
    typeof (value as { toObject?: unknown }).toObject === 'function'
      ? (value as { toObject(): unknown }).toObject()
      : value
  ) as OutboxEntry;
  return {
    id: e.id,
    subject: e.subject,
    payload: e.payload,
    createdAt: e.createdAt,
    ...(e.traceparent === undefined ? {} : { traceparent: e.traceparent }),
    ...(e.tracestate === undefined ? {} : { tracestate: e.tracestate }),
  };
}

/**
 * The entries an update appended with `$push: {outbox: {$each}}`, when its result says it changed
 * the document; null otherwise (a compare-and-set that matched nothing, an outcome not reported, an
 * outbox set whole), and the relay reads the document instead.
 */
function appliedEntries(update: Record<string, unknown> | null, result: unknown): OutboxEntry[] | null {
  const each = (update?.$push as { outbox?: { $each?: unknown } } | undefined)?.outbox?.$each;
  const applied = (result as { modifiedCount?: number } | null)?.modifiedCount === 1;
  return applied && Array.isArray(each) ? each.map(plainEntry) : null;
}

const LOCKED_QUERIES: ('updateOne' | 'findOneAndUpdate' | 'replaceOne' | 'findOneAndReplace')[] = [
  'updateOne',
  'findOneAndUpdate',
  'replaceOne',
  'findOneAndReplace',
];
const RELEASE = Symbol('aggregateLockRelease');

type LockedQuery = {
  getFilter(): Record<string, unknown>;
  getUpdate(): Record<string, unknown> | null;
  model: { collection: NamedCollection };
  [RELEASE]?: () => void;
};

/** The single `_id` a query targets, if it targets exactly one aggregate by id. */
function targetId(filter: Record<string, unknown>): unknown {
  const id = filter._id;
  if (id === undefined || id === null) return undefined;
  if (typeof id === 'object' && !('toHexString' in (id as object))) return undefined; // an operator
  return id;
}

/**
 * Adds the `outbox` array (and the indexes the relay sweeps by) to an aggregate's schema, queues
 * every by-id write of the aggregate behind the same per-aggregate lock as the relay's clean-up,
 * and notes for the relay of this process the writes that add outbox entries.
 */
export function outboxPlugin(schema: Schema): void {
  schema.add({
    outbox: { type: [OutboxEntrySchema], default: [], select: false },
    [OUTBOX_MINUTE_FIELD]: { type: String, select: false },
  });
  schema.index({ 'outbox.id': 1 }, { sparse: true });
  schema.index({ [OUTBOX_MINUTE_FIELD]: 1 }, { sparse: true });

  schema.pre(LOCKED_QUERIES, { document: false, query: true }, async function (this: LockedQuery) {
    stampUpdate(this.getUpdate());
    const id = targetId(this.getFilter());
    if (id === undefined) return;
    this[RELEASE] = await acquireAggregateLock(
      aggregateKey(this.model.collection, id),
      lockStoreOf(this.model.collection),
    );
  });
  const afterQuery = function (this: LockedQuery, result: unknown) {
    this[RELEASE]?.();
    const id = targetId(this.getFilter());
    if (id !== undefined && writesOutbox(this.getUpdate()))
      notePending(collectionKey(this.model.collection), id, appliedEntries(this.getUpdate(), result));
  };
  schema.post(LOCKED_QUERIES, { document: false, query: true }, afterQuery);
  schema.post(
    LOCKED_QUERIES,
    { document: false, query: true },
    function (this: LockedQuery, err: Error, _res: unknown, next: (err?: Error) => void) {
      this[RELEASE]?.();
      next(err);
    },
  );

  type SavedDoc = {
    isNew: boolean;
    _id: unknown;
    collection: NamedCollection;
    $locals: Record<string, unknown>;
    isModified(path: string): boolean;
    get(path: string): unknown;
    set(path: string, value: unknown): void;
  };
  schema.pre('save', function (this: SavedDoc) {
    const outbox = this.get('outbox') as unknown[] | undefined;
    if ((this.isNew || this.isModified('outbox')) && outbox && outbox.length > 0)
      this.set(OUTBOX_MINUTE_FIELD, minuteKey(Date.now()));
    // An insert writes exactly these entries; a save of a loaded document may not hold them all
    // (the outbox is not selected), so after one the relay reads the document.
    this.$locals.insertedOutbox = this.isNew && outbox ? outbox.map(plainEntry) : null;
  });
  schema.pre('save', async function (this: SavedDoc) {
    // Inserts are atomic on both stores; only updates of an existing document need the queue.
    if (this.isNew) return;
    this.$locals.releaseAggregateLock = await acquireAggregateLock(
      aggregateKey(this.collection, this._id),
      lockStoreOf(this.collection),
    );
  });
  schema.post('save', function (this: SavedDoc) {
    (this.$locals.releaseAggregateLock as (() => void) | undefined)?.();
    if (((this.get('outbox') as unknown[] | undefined)?.length ?? 0) > 0)
      notePending(
        collectionKey(this.collection),
        this._id,
        this.$locals.insertedOutbox as OutboxEntry[] | null,
      );
  });
  schema.post('save', function (this: SavedDoc, err: Error, _res: unknown, next: (err?: Error) => void) {
    (this.$locals.releaseAggregateLock as (() => void) | undefined)?.();
    next(err);
  });
}

/** `$push` clause appending entries in order; merge into an update document. */
export const pushOutbox = (entries: OutboxEntry[]) => ({ outbox: { $each: entries } });
