import {
  type AggregateDecision,
  deleteInBatches,
  type OutboxEntry,
  updateAggregate,
} from '@support-desk/platform';
import type { Connection, FilterQuery } from 'mongoose';
import {
  type GrantDoc,
  grantModel,
  type LoginAttemptDoc,
  loginAttemptModel,
  type SessionDoc,
  sessionModel,
} from './oauth.js';

/** How much one housekeeping purge deletes: per round, and rounds per pass. */
export interface PurgeBounds {
  batch: number;
  maxRounds: number;
}

/**
 * A grant is spent once nothing issued from it can still be used: its code expired unredeemed, its
 * refresh-token family expired, or it was revoked — each before `cutoff` (one access-token
 * lifetime ago, after which no access token carrying its `gid` can still be valid). A grant whose
 * events still wait for the outbox relay is kept until they are published.
 */
export function spentGrants(cutoff: Date): FilterQuery<GrantDoc> {
  return {
    'outbox.id': { $exists: false },
    $or: [
      { codeUsedAt: null, codeExpiresAt: { $lt: cutoff } },
      { refreshExpiresAt: { $lt: cutoff } },
      { revokedAt: { $lt: cutoff } },
    ],
  };
}

/** OAuth grants: the code and the refresh-token family of one authorization. */
export function createGrantsRepository(conn: Connection) {
  const model = grantModel(conn);
  return {
    async insert(grant: GrantDoc, outbox: OutboxEntry[] = []): Promise<void> {
      await model.create({ ...grant, outbox });
    },
    findById: (id: string) => model.findById(id).lean<GrantDoc>().exec(),
    update: <R>(
      id: string,
      decide: (current: GrantDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ) => updateAggregate<GrantDoc, R>(model, id, decide, { what: 'Grant' }),
    /** The user's unrevoked grants (created before `before`, when given). */
    listLiveOf: (userId: string, before: Date | null) =>
      model
        .find({ userId, revokedAt: null, ...(before && { createdAt: { $lt: before } }) })
        .limit(10_000)
        .lean<GrantDoc[]>()
        .exec(),
    /** Deletes spent grants (see `spentGrants`); returns how many. */
    purgeSpent: (cutoff: Date, bounds: PurgeBounds) =>
      deleteInBatches(model, spentGrants(cutoff), { sort: { _id: 1 }, ...bounds }),
  };
}

/** Browser sessions at the authorization server, keyed by the SHA-256 of the cookie value. */
export function createSessionsRepository(conn: Connection) {
  const model = sessionModel(conn);
  return {
    async insert(session: SessionDoc): Promise<void> {
      await model.create(session);
    },
    findById: (id: string) => model.findById(id).lean<SessionDoc>().exec(),
    /** True when this call removed it (a second sign-out finds nothing). */
    async remove(id: string): Promise<boolean> {
      return (await model.deleteOne({ _id: id })).deletedCount > 0;
    },
    /** Signs the user out everywhere (sessions created before `before`, when given). */
    async removeAllOf(userId: string, before: Date | null): Promise<number> {
      const filter = { userId, ...(before && { createdAt: { $lt: before } }) };
      return (await model.deleteMany(filter)).deletedCount;
    },
    purgeExpired: (now: Date, bounds: PurgeBounds) =>
      deleteInBatches(model, { expiresAt: { $lte: now } }, { sort: { expiresAt: 1 }, ...bounds }),
  };
}

export interface FailureCount {
  failures: number;
  windowStart: Date | null;
  lastFailureAt: Date | null;
}
const NO_FAILURES: FailureCount = { failures: 0, windowStart: null, lastFailureAt: null };

/** Failed sign-in counters: fixed windows, one document per key (account and address, or address). */
export function createLoginAttemptsRepository(conn: Connection) {
  const model = loginAttemptModel(conn);
  return {
    /** Failures (and the latest one's time) in the window that started after `windowStart`. */
    async failuresSince(key: string, windowStart: Date): Promise<FailureCount> {
      const doc = await model.findById(key).lean<LoginAttemptDoc>();
      if (!doc || new Date(doc.windowStart).getTime() <= windowStart.getTime()) return NO_FAILURES;
      return {
        failures: doc.failures,
        windowStart: doc.windowStart,
        lastFailureAt: doc.lastFailureAt ?? doc.windowStart,
      };
    },
    /** Counts one failure: in the current window, or as the first of a new one. */
    async recordFailure(key: string, now: Date, windowStart: Date): Promise<void> {
      const res = await model.updateOne(
        { _id: key, windowStart: { $gt: windowStart } },
        { $inc: { failures: 1 }, $set: { lastFailureAt: now } },
      );
      if (res.matchedCount === 0) {
        await model.updateOne(
          { _id: key },
          { $set: { failures: 1, windowStart: now, lastFailureAt: now } },
          { upsert: true },
        );
      }
    },
    async clear(key: string): Promise<void> {
      await model.deleteOne({ _id: key });
    },
    purgeLapsed: (windowStart: Date, bounds: PurgeBounds) =>
      deleteInBatches(model, { windowStart: { $lte: windowStart } }, { sort: { windowStart: 1 }, ...bounds }),
  };
}

export type GrantsRepository = ReturnType<typeof createGrantsRepository>;
export type SessionsRepository = ReturnType<typeof createSessionsRepository>;
export type LoginAttemptsRepository = ReturnType<typeof createLoginAttemptsRepository>;
