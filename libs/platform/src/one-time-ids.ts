import { type Connection, type Model, Schema } from 'mongoose';
import { purgeByDueHour } from './due-hours.js';
import { isDuplicateKeyError } from './duplicate-key.js';
import { type PeriodicTask, periodicTask } from './housekeeping.js';
import type { Logger } from './logger.js';
import { hourKey } from './time-buckets.js';

// The store half of body binding (body-binding.ts): a streamed call's assertion carries a
// one-time id, spent here before its body is read.

/** The one-time ids of streamed calls' assertions a service has seen (see above). */
export interface OneTimeIds {
  /** Records the id until `until`; false when it was seen before (a replay). */
  spend(id: string, until: Date): Promise<boolean>;
  /** The pass deleting ids whose assertions expired. */
  purge: PeriodicTask<number>;
}

interface SpentIdDoc {
  _id: string;
  until: Date;
  /** The hour `until` falls in (`hourKey`): the purge reads expired ids by hour. */
  untilHour: string;
}

const SpentIdSchema = new Schema<SpentIdDoc>(
  {
    _id: { type: String, required: true },
    until: { type: Date, required: true },
    untilHour: { type: String, required: true, index: true },
  },
  { collection: 'spent_assertion_ids', versionKey: false },
);

/**
 * The service's record of spent one-time ids, in its own database (collection
 * `spent_assertion_ids`), purged an hour at a time once expired (FerretDB has no TTL index).
 */
export function createOneTimeIds(
  conn: Connection,
  { logger, intervalMs = 10 * 60_000 }: { logger: Logger; intervalMs?: number },
): OneTimeIds {
  const model =
    (conn.models.SpentAssertionId as Model<SpentIdDoc> | undefined) ??
    conn.model<SpentIdDoc>('SpentAssertionId', SpentIdSchema);
  const purgeExpired = purgeByDueHour(model, 'untilHour', (now) => ({ until: { $lte: now } }));
  return {
    async spend(id, until) {
      try {
        await model.create({ _id: id, until, untilHour: hourKey(until) });
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },
    purge: periodicTask({
      name: 'spent assertion id purge',
      intervalMs,
      logger,
      run: () => purgeExpired(new Date(), { batch: 500, maxRounds: 20 }),
      onError: 0,
    }),
  };
}
