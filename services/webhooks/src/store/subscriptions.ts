import type { AggregateDecision, OutboxEntry } from '@support-desk/platform/core';
import {
  batchedCalls,
  freshReads,
  insertWithOutbox,
  keysetQuery,
  type KeysetSeek,
  outboxPlugin,
  updateAggregate,
} from '@support-desk/platform/store';
import { type Connection, type Model, Schema } from 'mongoose';
import { WORKER_BATCHES } from './batches.js';

/** One signing secret, encrypted at rest; `expiresAt` is set on the previous one by a rotation. */
export interface StoredSecret {
  sealed: string;
  createdAt: Date;
  expiresAt: Date | null;
}

export interface SubscriptionDoc {
  _id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  disabledReason: string | null;
  disabledAt: Date | null;
  secrets: StoredSecret[];
  /** Failed attempts since the last success, and when the first of them was. */
  failures: number;
  failingSince: Date | null;
  /** Soft delete: the subscription is kept (its deliveries name it) but no longer served. */
  deleted: boolean;
  /** A temporary subscription: housekeeping deletes it after this (null or absent: kept). */
  expiresAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
  rev?: number;
}

const SecretSchema = new Schema<StoredSecret>(
  { sealed: String, createdAt: Date, expiresAt: Date },
  { _id: false, versionKey: false },
);

const SubscriptionSchema = new Schema<SubscriptionDoc>(
  {
    _id: { type: String, required: true },
    url: { type: String, required: true },
    events: { type: [String], required: true },
    description: { type: String, default: '' },
    active: { type: Boolean, required: true },
    disabledReason: { type: String, default: null },
    disabledAt: { type: Date, default: null },
    secrets: { type: [SecretSchema], required: true },
    failures: { type: Number, default: 0 },
    failingSince: { type: Date, default: null },
    deleted: { type: Boolean, default: false },
    expiresAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    rev: { type: Number, default: 0 },
  },
  { collection: 'subscriptions', versionKey: false },
);
// The intake's question for every event ("which subscriptions exist?") and the list: one
// top-level equality, pushed down on FerretDB/PostgreSQL, an index on MongoDB.
SubscriptionSchema.index({ deleted: 1, _id: -1 });
outboxPlugin(SubscriptionSchema);

export const subscriptionModel = (conn: Connection): Model<SubscriptionDoc> =>
  (conn.models.Subscription as Model<SubscriptionDoc> | undefined) ??
  conn.model<SubscriptionDoc>('Subscription', SubscriptionSchema);

const isLive = (doc: SubscriptionDoc | null): doc is SubscriptionDoc => doc !== null && !doc.deleted;
const NEWEST_FIRST = [{ field: '_id', descending: true }];

/**
 * Subscriptions: every query, and the soft-delete rule checked on the document read by `_id`.
 * `changed` hears of every write to one (the delivery worker's copies of it are then out of date).
 */
export function createSubscriptionsRepository(
  conn: Connection,
  { changed = () => {} }: { changed?: (id: string) => void } = {},
) {
  const model = subscriptionModel(conn);
  /**
   * Reads by id, those asked at once together: one read per distinct subscription (a burst of lanes
   * of one subscription reads it once). Like `live`, a caller never shares a read under way.
   */
  const byId = batchedCalls(async (ids: string[]) => {
    const distinct = [...new Set(ids)];
    const docs = await Promise.all(distinct.map((id) => model.findById(id).lean<SubscriptionDoc>().exec()));
    const found = new Map(distinct.map((id, i) => [id, docs[i] ?? null]));
    return ids.map((id) => found.get(id) ?? null);
  }, WORKER_BATCHES);
  return {
    /** A live subscription, for the delivery worker: its lanes' reads made at once share round trips. */
    async findLive(id: string): Promise<SubscriptionDoc | null> {
      const doc = await byId(id);
      return isLive(doc) ? doc : null;
    },

    /** The same read on its own, under the deadline of the API call that asks (`store-deadline.ts`). */
    async findLiveForCall(id: string): Promise<SubscriptionDoc | null> {
      const doc = await model.findById(id).lean<SubscriptionDoc>().exec();
      return isLive(doc) ? doc : null;
    },

    /**
     * Every live subscription (the intake matches each event against them). The intake takes 16
     * events in at once: those that ask during one read share the next (never an earlier one, which
     * could miss a subscription made just before their event), so a burst costs a read or two.
     * The answer is shared: callers must not change it.
     */
    live: freshReads(() => model.find({ deleted: false }).lean<SubscriptionDoc[]>().exec()),

    /** A page of live subscriptions, newest first (`skip` in page mode, a seek in cursor mode). */
    async page(read: { skip: number; limit: number; seek?: KeysetSeek; count: boolean }) {
      const { sort, condition } = keysetQuery(NEWEST_FIRST, read.seek);
      const filter = { deleted: false, ...(condition ?? {}) };
      const [items, total] = await Promise.all([
        model.find(filter).sort(sort).skip(read.skip).limit(read.limit).lean<SubscriptionDoc[]>().exec(),
        read.count ? model.countDocuments({ deleted: false }).exec() : Promise.resolve(0),
      ]);
      return { items, total };
    },

    async insert(doc: SubscriptionDoc, outbox: OutboxEntry[]): Promise<void> {
      await insertWithOutbox(model, doc, outbox);
    },

    /** Read-decide-write of one live subscription (compare-and-set on `rev`; 404, 409 as usual). */
    async update<R>(
      id: string,
      decide: (current: SubscriptionDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ): Promise<R> {
      try {
        return await updateAggregate<SubscriptionDoc, R>(model, id, decide, {
          what: 'Webhook',
          visible: isLive,
        });
      } finally {
        // Also after a failure: a write may have landed before it (a lost answer).
        changed(id);
      }
    },
  };
}

export type SubscriptionsRepository = ReturnType<typeof createSubscriptionsRepository>;
