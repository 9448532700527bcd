import type { Model } from 'mongoose';
import { MINUTE_MS, minuteKey, minuteStart, TimeBucketCursor } from './time-buckets.js';
import type { OutboxEntry } from './outbox-entry.js';
import { OUTBOX_MINUTE_FIELD } from './outbox.js';

export type PendingDoc = { _id: unknown; outbox?: OutboxEntry[] };

/** A minute is swept once it ended at least a minute ago: its writers have published long before. */
const SWEEP_DELAY_MS = 2 * MINUTE_MS;
/** Minutes a sweep catches up one by one; further behind (a long pause), it sweeps in full. */
const SWEEP_MAX_MINUTES = 30;

/**
 * The relay's safety net: entries another process left pending (a crash between its write and
 * its publish, a tool that exits). A full sweep (`outbox.id` exists: every document decoded on
 * FerretDB) runs at start, on request and every `fullSweepIntervalMs`; in between, each minute is
 * swept once, by the minute its entries were written in (`outboxMinute`, set by `outboxPlugin`):
 * an equality FerretDB on PostgreSQL pushes down and MongoDB answers from an index.
 */
export function createOutboxSweep(opts: {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  models: Model<any>[];
  batchSize: number;
  fullSweepIntervalMs: number;
  clock: () => number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  publishAll: (model: Model<any>, docs: PendingDoc[]) => Promise<void>;
}) {
  const cursors = new Map(
    opts.models.map((model) => [
      model,
      new TimeBucketCursor(MINUTE_MS, SWEEP_MAX_MINUTES, opts.fullSweepIntervalMs),
    ]),
  );
  return {
    requestFull() {
      for (const cursor of cursors.values()) cursor.requestFull();
    },
    /** One sweep of `model`'s collection; true when a batch was full (sweep again at once). */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
    async sweep(model: Model<any>): Promise<boolean> {
      const cursor = cursors.get(model)!;
      const now = opts.clock();
      const newest = minuteStart(now - SWEEP_DELAY_MS);
      const read = async (condition: Record<string, unknown>) => {
        const docs = (await model.collection
          .find(
            { ...condition, 'outbox.id': { $exists: true } },
            { projection: { outbox: 1 }, limit: opts.batchSize },
          )
          .toArray()) as unknown as PendingDoc[];
        await opts.publishAll(model, docs);
        return docs.length === opts.batchSize;
      };
      const plan = cursor.plan(now, newest);
      if (plan.full) {
        if (await read({})) return true;
        cursor.fullDone(now, newest);
        return false;
      }
      for (const minute of plan.buckets) {
        if (await read({ [OUTBOX_MINUTE_FIELD]: minuteKey(minute) })) return true;
        cursor.bucketDone(minute);
      }
      return false;
    },
  };
}
