import { type Logger, periodicTask } from '@support-desk/platform/core';
import { purgeByDueHour } from '@support-desk/platform/store';
import type { Connection } from 'mongoose';
import { eventModel } from './event-model.js';

export const TTL_INDEX = 'timestamp_ttl';
/** The sweeper's index: expired events are read by the hour of their timestamp. */
const HOUR_INDEX = 'hour';
const DAY_S = 86_400;

type RetentionMode = 'off' | 'ttl-index' | 'sweeper';

export interface RetentionOptions {
  conn: Connection;
  logger: Logger;
  /** 0 = keep forever. */
  days: number;
  sweepIntervalMs: number;
  /** Events deleted per round of a sweep (a sweep runs rounds until nothing is older). */
  sweepBatch: number;
  /** Rounds per sweep, so one sweep never runs unbounded. */
  maxRoundsPerSweep?: number;
}

export interface Retention {
  mode: RetentionMode;
  /**
   * Deletes what is past retention now and returns how many were deleted; in sweeper mode it joins
   * the periodic sweep when one is running (the first starts with the service).
   */
  sweepOnce(): Promise<number>;
  stop(): Promise<void>;
}

const isNotImplemented = (err: unknown) =>
  /not implemented/i.test(String((err as Error)?.message)) || (err as { code?: number })?.code === 238;
const isOptionsConflict = (err: unknown) => {
  const code = (err as { code?: number })?.code;
  return code === 85 || code === 86;
};

/**
 * Retention of `AUDIT_RETENTION_DAYS`: a TTL index on `timestamp` where the database supports it
 * (MongoDB), otherwise (FerretDB v1 answers "not implemented") a periodic bounded sweeper. Off:
 * any TTL index left from an earlier setting is dropped so nothing expires unexpectedly.
 */
export async function startRetention(opts: RetentionOptions): Promise<Retention> {
  const { conn, days, logger } = opts;
  const log = logger.child({ component: 'retention' });
  const model = eventModel(conn);
  const collection = model.collection;
  const maxRounds = opts.maxRoundsPerSweep ?? 20;

  const existing = await collection.indexes().catch(() => [] as { name?: string }[]);
  const hasTtl = existing.some((i) => i.name === TTL_INDEX);

  // By the hour of the timestamp since the last sweep (an equality: pushed down on PostgreSQL,
  // from an index on MongoDB), the exact cutoff checked on what that returns; in full at the
  // first sweep and once a day (events stored before the hour field, late arrivals).
  const purge = purgeByDueHour(model, 'hour', (cutoff) => ({ timestamp: { $lt: cutoff } }));
  const sweepOnce = async () => {
    if (days <= 0) return 0;
    const cutoff = new Date(Date.now() - days * DAY_S * 1000);
    const deleted = await purge(cutoff, { batch: opts.sweepBatch, maxRounds });
    if (deleted > 0) log.info({ deleted, cutoff }, 'retention sweep deleted expired events');
    return deleted;
  };

  if (days <= 0) {
    if (hasTtl) {
      await collection.dropIndex(TTL_INDEX);
      log.info('retention off: dropped the TTL index');
    }
    log.info({ mode: 'off' }, 'retention off: events are kept forever');
    return { mode: 'off', sweepOnce, stop: async () => undefined };
  }

  const expireAfterSeconds = days * DAY_S;
  let mode: RetentionMode = 'ttl-index';
  try {
    await collection.createIndex({ timestamp: 1 }, { name: TTL_INDEX, expireAfterSeconds });
  } catch (err) {
    if (isOptionsConflict(err)) {
      // The retention period changed: adjust the existing TTL index in place.
      await conn.db!.command({
        collMod: collection.collectionName,
        index: { name: TTL_INDEX, expireAfterSeconds },
      });
    } else if (isNotImplemented(err)) {
      mode = 'sweeper';
    } else {
      throw err;
    }
  }

  if (mode === 'ttl-index') {
    log.info({ mode, days }, 'retention: TTL index on timestamp');
    return { mode, sweepOnce, stop: async () => undefined };
  }

  await collection.createIndex({ hour: 1 }, { name: HOUR_INDEX });
  log.info(
    { mode, days, intervalMs: opts.sweepIntervalMs },
    'retention: TTL indexes unsupported by this database; sweeping periodically',
  );
  const sweeper = periodicTask({
    name: 'retention sweep',
    intervalMs: opts.sweepIntervalMs,
    logger: log,
    run: sweepOnce,
    onError: 0,
  });
  sweeper.start();
  return { mode, sweepOnce: sweeper.runNow, stop: () => sweeper.stop() };
}
