import { type AggregateDecision, hourKey, type OutboxEntry } from '@support-desk/platform/core';
import {
  insertWithOutbox,
  type PurgeBounds,
  purgeByDueHour,
  updateAggregate,
} from '@support-desk/platform/store';
import type { Connection, FilterQuery } from 'mongoose';
import {
  type GrantDoc,
  grantEnd,
  grantModel,
  type LoginAttemptDoc,
  loginAttemptModel,
  type SessionDoc,
  sessionModel,
} from './oauth.js';

export type { PurgeBounds };

type Decide<R> = (current: GrantDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>;

/** The grant's `endsHour` as it will be once `set` is written. */
function withEndsHour(current: GrantDoc, set: Record<string, unknown>): Record<string, unknown> {
  const end = grantEnd({ ...current, ...set } as GrantDoc);
  return end === null ? set : { ...set, endsHour: hourKey(end) };
}

/**
 * A grant is spent once nothing issued from it can still be used: its code expired unredeemed, its
 * refresh-token family expired, or it was revoked — each before `cutoff` (one access-token
 * lifetime ago, after which no access token carrying its `gid` can still be valid). A grant whose
 * events still wait for the outbox relay is kept until they are published.
 */
function spentGrants(cutoff: Date): FilterQuery<GrantDoc> {
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
  const purge = purgeByDueHour(model, 'endsHour', spentGrants);
  return {
    async insert(grant: GrantDoc, outbox: OutboxEntry[] = []): Promise<void> {
      await insertWithOutbox(model, { ...grant, ...withEndsHour(grant, {}) }, outbox);
    },
    findById: (id: string) => model.findById(id).lean<GrantDoc>().exec(),
    /** Read-decide-write; every write also moves the grant's `endsHour` with what it changes. */
    update: <R>(id: string, decide: Decide<R>) =>
      updateAggregate<GrantDoc, R>(
        model,
        id,
        async (current) => {
          const decision = await decide(current);
          const set = decision.write?.set;
          if (!decision.write || !set) return decision;
          return { ...decision, write: { ...decision.write, set: withEndsHour(current, set) } };
        },
        { what: 'Grant' },
      ),
    /**
     * The user's unrevoked grants (created before `before`, when given). One equality reaches the
     * store (the one a backend can answer from an index); the rest is checked on the documents.
     */
    async listLiveOf(userId: string, before: Date | null): Promise<GrantDoc[]> {
      const grants = await model.find({ userId }).limit(10_000).lean<GrantDoc[]>().exec();
      return grants.filter((g) => !g.revokedAt && (!before || g.createdAt < before));
    },
    /** The client's unrevoked grants (revoking the client ends them); one equality reaches the store. */
    async listLiveOfClient(clientId: string): Promise<GrantDoc[]> {
      const grants = await model.find({ clientId }).limit(10_000).lean<GrantDoc[]>().exec();
      return grants.filter((g) => !g.revokedAt);
    },
    /** Deletes spent grants (see `spentGrants`), reading by `endsHour`; returns how many. */
    purgeSpent: (cutoff: Date, bounds: PurgeBounds) => purge(cutoff, bounds),
  };
}

/** Browser sessions at the authorization server, keyed by the SHA-256 of the cookie value. */
export function createSessionsRepository(conn: Connection) {
  const model = sessionModel(conn);
  const purge = purgeByDueHour(model, 'expiresHour', (now) => ({ expiresAt: { $lte: now } }));
  return {
    async insert(session: SessionDoc): Promise<void> {
      await model.create({ ...session, expiresHour: hourKey(session.expiresAt) });
    },
    findById: (id: string) => model.findById(id).lean<SessionDoc>().exec(),
    /** Removes it and returns what was removed (null: a second sign-out finds nothing). */
    remove: (id: string) => model.findOneAndDelete({ _id: id }).lean<SessionDoc>().exec(),
    /** Signs the user out everywhere (sessions created before `before`, when given). */
    async removeAllOf(userId: string, before: Date | null): Promise<number> {
      const filter = { userId, ...(before && { createdAt: { $lt: before } }) };
      return (await model.deleteMany(filter)).deletedCount;
    },
    /** Deletes expired sessions, reading by `expiresHour`; returns how many. */
    purgeExpired: (now: Date, bounds: PurgeBounds) => purge(now, bounds),
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
  const purge = purgeByDueHour(model, 'windowHour', (windowStart) => ({
    windowStart: { $lte: windowStart },
  }));
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
    /**
     * Counts one failure: in the window `current` (as `failuresSince` read it) is in, or as the
     * first of a new one. One write by `_id` alone: the window was judged on the document already
     * read, not by a condition the store would have to evaluate on every counter it holds.
     */
    async recordFailure(key: string, now: Date, current: FailureCount): Promise<void> {
      if (current.windowStart) {
        const res = await model.updateOne(
          { _id: key },
          { $inc: { failures: 1 }, $set: { lastFailureAt: now } },
        );
        if (res.matchedCount > 0) return;
        // Cleared since it was read (a sign-in of that pair): this failure starts a new window.
      }
      await model.updateOne(
        { _id: key },
        { $set: { failures: 1, windowStart: now, lastFailureAt: now, windowHour: hourKey(now) } },
        { upsert: true },
      );
    },
    async clear(key: string): Promise<void> {
      await model.deleteOne({ _id: key });
    },
    /** Deletes counters whose window started at or before `windowStart`, reading by `windowHour`. */
    purgeLapsed: (windowStart: Date, bounds: PurgeBounds) => purge(windowStart, bounds),
  };
}
