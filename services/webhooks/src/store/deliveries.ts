import type { DeliveryAttempt, DeliveryStatus } from '@support-desk/contracts';
import { hourKey } from '@support-desk/platform/core';
import { batchedCalls, inUpdateChunks, purgeByDueHour } from '@support-desk/platform/store';
import { type AnyBulkWriteOperation, type Connection, type Model, Schema } from 'mongoose';
import { WORKER_BATCHES } from './batches.js';
import { deliveryList, deliveryListKeys } from './delivery-list.js';

/**
 * One delivery: one event (or ping) to one subscription, with every attempt. `_id` is the
 * `webhook-id` receivers de-duplicate on: derived from the event and the subscription, so an event
 * redelivered by JetStream makes no second delivery.
 */
export interface DeliveryDoc {
  _id: string;
  subscriptionId: string;
  eventId: string | null;
  eventType: string;
  /** The ordering lane: a subscription's deliveries of one resource go out one at a time, in order. */
  lane: string;
  /** Place in the lane: the event's timestamp (ISO, fixed width), then its id. */
  position: string;
  /**
   * The event's sequence in the events stream (absent on pings and on deliveries stored before it
   * was recorded): the delivery waits until the intake has taken in every event before it.
   */
  streamSeq?: number | null;
  /** The body sent (the event as the events API shows it, plus the webhook id). */
  payload: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** Failed attempts since it was (re)queued: the place in the retry schedule. */
  failedTries: number;
  nextAttemptAt: Date | null;
  /**
   * The minute (`minuteKey`) of `nextAttemptAt` while the worker should look at it; null when
   * nothing is due (finished, or parked while its subscription is inactive). The worker's scans
   * read minutes by equality (see DEVELOPERS.md: no range reaches FerretDB's backend).
   */
  dueMinute: string | null;
  createdAt: Date;
  /**
   * A finished delivery (succeeded or failed) is deleted after the retention: when, and the hour
   * of it (`hourKey`), which the purge reads by equality. Null while pending or kept forever.
   */
  expiresAt?: Date | null;
  expiresHour?: string | null;
  /**
   * The hour and day (`hourKey`, `dayKey`) of the time the id holds: what the delivery log walks
   * (delivery-list.ts). Set at insert; deliveries stored before them get them at start.
   */
  idHour?: string;
  idDay?: string;
}

const DeliverySchema = new Schema<DeliveryDoc>(
  {
    _id: { type: String, required: true },
    subscriptionId: { type: String, required: true },
    eventId: { type: String, default: null },
    eventType: { type: String, required: true },
    lane: { type: String, required: true },
    position: { type: String, required: true },
    streamSeq: { type: Number, default: null },
    payload: { type: String, required: true },
    status: { type: String, required: true },
    attempts: { type: Schema.Types.Mixed, default: [] },
    failedTries: { type: Number, default: 0 },
    nextAttemptAt: { type: Date, default: null },
    dueMinute: { type: String, default: null },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, default: null },
    expiresHour: { type: String, default: null },
    idHour: { type: String },
    idDay: { type: String },
  },
  { collection: 'deliveries', versionKey: false, minimize: false },
);
DeliverySchema.index({ status: 1, dueMinute: 1 }, { name: 'due' });
DeliverySchema.index({ lane: 1, status: 1, position: 1 }, { name: 'lane' });
DeliverySchema.index({ subscriptionId: 1, _id: -1 }, { name: 'subscription' });
DeliverySchema.index({ subscriptionId: 1, status: 1 }, { name: 'subscription_status' });
// The oldest pending delivery of a subscription (the backlog gauge): one index entry on MongoDB.
DeliverySchema.index({ subscriptionId: 1, status: 1, position: 1 }, { name: 'subscription_pending' });
DeliverySchema.index({ expiresHour: 1 }, { name: 'expires_hour' });
// The delivery log's steps: a subscription's hour or day of ids (on FerretDB/PostgreSQL, the GIN
// indexes beside these make each of its equalities an index lookup).
DeliverySchema.index({ subscriptionId: 1, idHour: 1, _id: -1 }, { name: 'subscription_hour' });
DeliverySchema.index({ subscriptionId: 1, idDay: 1, _id: -1 }, { name: 'subscription_day' });

/** What the worker's scans read of a due delivery: which lane to work, whether it is due, its event's place. */
export type DueDelivery = Pick<DeliveryDoc, '_id' | 'lane' | 'nextAttemptAt' | 'dueMinute' | 'streamSeq'>;
const DUE_FIELDS = { _id: 1, lane: 1, nextAttemptAt: 1, dueMinute: 1, streamSeq: 1 };

export const deliveryModel = (conn: Connection): Model<DeliveryDoc> =>
  (conn.models.Delivery as Model<DeliveryDoc> | undefined) ??
  conn.model<DeliveryDoc>('Delivery', DeliverySchema);

type DeliveryState = Partial<Pick<DeliveryDoc, 'status' | 'nextAttemptAt' | 'dueMinute' | 'failedTries'>>;

/**
 * Deliveries: every query the API and the worker make, each on indexed equalities, and the
 * retention rule: a delivery that reaches `succeeded` or `failed` expires `retentionMs` later
 * (0: never); one queued again (replay, resume) no longer expires.
 */
export function createDeliveriesRepository(
  conn: Connection,
  { retentionMs, totalsTtlMs = 0 }: { retentionMs: number; totalsTtlMs?: number },
) {
  const model = deliveryModel(conn);
  const withExpiry = (state: DeliveryState, now = new Date()) => {
    if (!state.status) return state;
    const finished = state.status !== 'pending' && retentionMs > 0;
    const expiresAt = finished ? new Date(now.getTime() + retentionMs) : null;
    return { ...state, expiresAt, expiresHour: expiresAt && hourKey(expiresAt) };
  };
  const purge = purgeByDueHour(model, 'expiresHour', (cutoff) => ({ expiresAt: { $lte: cutoff } }));
  const log = deliveryList(model, conn, totalsTtlMs);
  /**
   * The worker's outcome writes, those asked at once in one unordered bulk write (each by `_id`,
   * an equality both stores push down): lanes finishing together cost the store one command, not
   * one each. One delivery's writes are never in one batch (its lane waits for each).
   */
  const writeOutcomes = batchedCalls(async (ops: AnyBulkWriteOperation<DeliveryDoc>[]) => {
    await inUpdateChunks(ops, (chunk) => model.bulkWrite(chunk, { ordered: false }));
    return ops.map(() => undefined);
  }, WORKER_BATCHES);
  return {
    /**
     * New deliveries (with their list keys, their subscriptions' log spans widened first); one
     * that exists already (the same event again) is left as it is.
     */
    async insertNew(docs: DeliveryDoc[]): Promise<void> {
      if (docs.length === 0) return;
      await log.storing(docs);
      try {
        await model.insertMany(
          docs.map((d) => ({ ...d, ...deliveryListKeys(d._id) })),
          { ordered: false },
        );
      } catch (err) {
        const writeErrors = (err as { writeErrors?: { code?: number; err?: { code?: number } }[] })
          .writeErrors;
        const onlyDuplicates =
          writeErrors?.length && writeErrors.every((e) => (e.code ?? e.err?.code) === 11000);
        if (!onlyDuplicates) throw err;
      }
    },

    byId: (id: string) => model.findById(id).lean<DeliveryDoc>().exec(),

    /** A page of one subscription's deliveries, newest first, an hour or a day at a time. */
    page: log.page,

    /**
     * Gives at most `limit` deliveries stored before the list keys existed those keys (their
     * subscriptions' spans widened first); how many it gave. Only the keys are written.
     */
    async completeListKeys(limit: number): Promise<number> {
      const incomplete = await model
        .find({ idDay: null }, { _id: 1, subscriptionId: 1 })
        .limit(limit)
        .lean<Pick<DeliveryDoc, '_id' | 'subscriptionId'>[]>()
        .exec();
      if (incomplete.length === 0) return 0;
      await log.storing(incomplete);
      await inUpdateChunks(
        incomplete.map((d) => ({
          updateOne: { filter: { _id: d._id }, update: { $set: deliveryListKeys(d._id) } },
        })),
        (chunk) => model.bulkWrite(chunk, { ordered: false }),
      );
      return incomplete.length;
    },

    /** Pending deliveries whose due minute is this one (what a scan needs of them, no payload). */
    dueInMinute: (minute: string, limit: number) =>
      model
        .find({ status: 'pending', dueMinute: minute }, DUE_FIELDS)
        .limit(limit)
        .lean<DueDelivery[]>()
        .exec(),

    /** Every pending delivery (the worker's full pass: at start and on a slow schedule). */
    pending: (limit: number) =>
      model.find({ status: 'pending' }, DUE_FIELDS).limit(limit).lean<DueDelivery[]>().exec(),

    /**
     * How many deliveries of a subscription are pending, counting up to `cap`: two top-level
     * equalities (pushed down on FerretDB/PostgreSQL, an index on MongoDB), bounded by the cap.
     */
    pendingOf: (subscriptionId: string, cap: number) =>
      model.countDocuments({ subscriptionId, status: 'pending' }, { limit: cap }).exec(),

    /**
     * When the event of a subscription's oldest pending delivery happened (ms; `position` starts
     * with it), or null: on MongoDB the first entry of the `subscription_pending` index; FerretDB
     * reads the subscription's pending rows (the equalities pushed down) and sorts them.
     */
    async oldestPendingOf(subscriptionId: string): Promise<number | null> {
      const [doc] = await model
        .find({ subscriptionId, status: 'pending' }, { position: 1 })
        .sort({ position: 1 })
        .limit(1)
        .lean<Pick<DeliveryDoc, '_id' | 'position'>[]>()
        .exec();
      if (!doc) return null;
      const at = Date.parse(doc.position.split('|')[0]);
      return Number.isNaN(at) ? null : at;
    },

    /**
     * The oldest pending delivery of a lane (the only one of the lane that may be attempted), and
     * the one after it if any: a lane whose head was its last ends without a read after it.
     */
    laneHead: (lane: string) =>
      model.find({ lane, status: 'pending' }).sort({ position: 1 }).limit(2).lean<DeliveryDoc[]>().exec(),

    /**
     * An attempt's outcome: the attempt appended, the new state set (shared with the outcomes of
     * other lanes written at once; for the worker, outside any call's deadline).
     */
    async recordAttempt(
      id: string,
      attempt: DeliveryAttempt,
      state: Pick<DeliveryDoc, 'status' | 'nextAttemptAt' | 'dueMinute' | 'failedTries'>,
    ): Promise<void> {
      await writeOutcomes({
        updateOne: { filter: { _id: id }, update: { $push: { attempts: attempt }, $set: withExpiry(state) } },
      });
    },

    /** Sets the state of one delivery (replay, parking). */
    async setState(id: string, state: DeliveryState) {
      await model.updateOne({ _id: id }, { $set: withExpiry(state) }).exec();
    },

    /**
     * The lane's other pending deliveries leave the scans while its head waits for a retry (they
     * go out after it, from the lane's loop): the scans then read only what can be attempted.
     */
    async parkBehind(lane: string, headId: string): Promise<void> {
      await model
        .updateMany({ lane, status: 'pending', _id: { $ne: headId } }, { $set: { dueMinute: null } })
        .exec();
    },

    /** Every pending delivery of a subscription due now (a re-enabled subscription resumes). */
    async resumeSubscription(subscriptionId: string, at: Date, minute: string): Promise<void> {
      await model
        .updateMany(
          { subscriptionId, status: 'pending' },
          { $set: { nextAttemptAt: at, dueMinute: minute, expiresAt: null, expiresHour: null } },
        )
        .exec();
    },

    /** A deleted subscription's pending deliveries are closed (never attempted). */
    async closeSubscription(subscriptionId: string): Promise<void> {
      await model
        .updateMany(
          { subscriptionId, status: 'pending' },
          { $set: withExpiry({ status: 'failed', nextAttemptAt: null, dueMinute: null }) },
        )
        .exec();
    },

    /** Deletes the deliveries expired by `now` (bounded; the rest on the next pass). */
    purgeExpired: (now: Date) => purge(now, { batch: 1000, maxRounds: 10 }),
  };
}

export type DeliveriesRepository = ReturnType<typeof createDeliveriesRepository>;
