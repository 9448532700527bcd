import type { Role } from '@support-desk/contracts';
import type { AggregateDecision, OutboxEntry } from '@support-desk/platform/core';
import {
  besideSeek,
  completeDerivedFields,
  createListTotals,
  escapeRegex,
  countedWalk,
  type HourWalkReads,
  type HourWalkResult,
  initialWalk,
  insertWithOutbox,
  keysetQuery,
  type KeysetSeek,
  oneOf,
  SEARCH_KEY_LENGTH,
  searchKeyOf,
  selectOutbox,
  timedSpans,
  totalKeyOf,
  updateAggregate,
  walkWithKeptTotal,
  WALK_STEPS_PER_CALL,
  type WalkStep,
} from '@support-desk/platform/store';
import type { Connection, FilterQuery } from 'mongoose';
import { KEYED_FIELDS, userListKeys } from './user-keys.js';
import { DEFAULT_USER_ORDER, userOrders, type UserSort, userWalks } from './user-order.js';
import { type UserDoc, type UserEmailDoc, userEmailModel, userModel } from './users.js';

/** The users list's filters, each optional (already validated). */
export interface UserListFilter {
  /** Any of these roles, any of these statuses. */
  role?: Role[];
  status?: UserDoc['status'][];
  groupId?: string;
  isVip?: boolean;
  /** A word of the name or the email starts with it, case-insensitively (`user-keys.ts`). */
  search?: string;
  /** The users of one identity provider connection (SCIM lists). */
  identityProvider?: string;
}

/** What one list call reads: a page by skip (with the count), or after a keyset position. */
export interface UserListWindow {
  skip: number;
  limit: number;
  seek?: KeysetSeek;
  count: boolean;
  /** The steps the count reads past a full page (`walkHours`); SCIM's exact `totalResults`: Infinity. */
  countStepsPastPage?: number;
}

function listQuery(filter: UserListFilter): FilterQuery<UserDoc> {
  const query: FilterQuery<UserDoc> = {};
  if (filter.role) query.role = oneOf(filter.role);
  if (filter.status) query.status = oneOf(filter.status);
  if (filter.groupId) query.groups = filter.groupId;
  if (filter.isVip !== undefined) query.isVip = filter.isVip;
  if (filter.identityProvider) query.identityProvider = filter.identityProvider;
  if (filter.search) {
    // An element of the stored keys (a top-level equality, pushed down); a longer text's rest is
    // checked on the users that key finds.
    query.searchKeys = searchKeyOf(filter.search);
    if (filter.search.length > SEARCH_KEY_LENGTH) {
      const re = new RegExp(escapeRegex(filter.search), 'i');
      query.$or = [{ name: re }, { email: re }];
    }
  }
  return query;
}

/**
 * With a write that sets what a list key comes from (`name`, `email`, the times), the keys too,
 * derived from the user as the write leaves it.
 */
function withListKeys<R>(current: UserDoc, decision: AggregateDecision<R>): AggregateDecision<R> {
  const set = decision.write?.set;
  if (!decision.write || !set || !KEYED_FIELDS.some((f) => f in set)) return decision;
  const after = { ...current, ...(set as Partial<UserDoc>) };
  return { ...decision, write: { ...decision.write, set: { ...set, ...userListKeys(after) } } };
}

/** A newest-first order of users read by equality alone (no list order from the store). */
const newestFirst = (users: UserDoc[]) =>
  users.sort((a, b) => +b.createdAt - +a.createdAt || (a._id < b._id ? 1 : -1));

export type UserBrief = Pick<UserDoc, '_id' | 'email' | 'name'>;

export const emailKey = (email: string) => email.trim().toLowerCase();

/** Users: every query of the aggregate (membership lives on the user). */
export function createUsersRepository(conn: Connection, { totalsTtlMs = 0 }: { totalsTtlMs?: number } = {}) {
  const model = userModel(conn);
  const emails = userEmailModel(conn);
  /** `forUpdate`: with the hidden outbox too, so `update` can decide on this copy (`current`). */
  const select = (withPassword: boolean, forUpdate: boolean) =>
    [withPassword && '+passwordHash', forUpdate && selectOutbox].filter(Boolean).join(' ');
  const byId = (id: string, withPassword = false, forUpdate = false) => {
    const query = model.findById(id);
    const fields = select(withPassword, forUpdate);
    if (fields) query.select(fields);
    return query.lean<UserDoc>().exec();
  };
  const bounds = timedSpans(conn, model, 'users', { counted: true });
  const totals = createListTotals(totalsTtlMs, { exact: true });
  /** One step's reads: its matches in list order after the seek, and their count. */
  const readsOf = <S extends WalkStep>(
    inStep: (step: S) => FilterQuery<UserDoc>,
    order: Record<string, 1 | -1>,
    condition: Record<string, unknown> | undefined,
  ): HourWalkReads<UserDoc, S> => ({
    find: (step, skip, limit) =>
      model
        .find(besideSeek(inStep(step), condition))
        .sort(order)
        .skip(skip)
        .limit(limit)
        .lean<UserDoc[]>()
        .exec(),
    count: (step, limit) => model.countDocuments(inStep(step), { limit }).exec(),
  });
  /**
   * A page of users in `sort` order, by skip or after a keyset position, and (when `count`) the
   * total matching (up to the cap), read a step at a time (`walkHours`): an hour, day or month of
   * creation or change for the time sorts, an initial of the name or email for theirs, each with
   * the filter's equalities beside it. `stoppedAt`: the call read its steps before the page was
   * full and the list ended.
   */
  const page = async (filter: UserListFilter, sort: UserSort, window: UserListWindow) => {
    const query = listQuery(filter);
    const keys = userOrders.keys(sort);
    const { sort: order, condition } = keysetQuery(keys, window.seek);
    const ascending = order[keys[0]!.field] === 1;
    // The platform's step budget (hours, days, months, initials): then a cursor to where it stopped.
    const budget = { maxSteps: WALK_STEPS_PER_CALL };
    const totalKey = totalKeyOf(filter);
    const answer = (found: HourWalkResult<UserDoc>) => ({
      users: found.docs,
      total: found.total,
      stoppedAt: found.stoppedAt,
      countStopped: found.countStopped,
    });
    if (sort.field === 'name' || sort.field === 'email') {
      const walk = userWalks.initial[sort.field];
      const found = await walkWithKeptTotal(
        totals,
        totalKey,
        initialWalk(walk.rank, ascending, window.seek?.values),
        window,
        readsOf(
          (step) => ({
            ...query,
            ...step.where,
            [walk.key]: step.to === undefined ? { $gte: step.from } : { $gte: step.from, $lt: step.to },
          }),
          order,
          condition,
        ),
        budget,
      );
      return answer(found);
    }
    const walk = userWalks.time[sort.field];
    const span = await bounds.read(walk.time as 'createdAt' | 'updatedAt');
    if (!span) return { users: [] as UserDoc[], total: 0, stoppedAt: undefined, countStopped: undefined };
    const found = await walkWithKeptTotal(
      totals,
      totalKey,
      countedWalk(walk, ascending, span, window.seek?.values),
      window,
      readsOf(
        (step) => ({ ...query, ...step.where, [walk.time]: { $gte: step.from, $lt: step.to } }),
        order,
        condition,
      ),
      budget,
    );
    return answer(found);
  };
  return {
    findById: (id: string) => byId(id),

    /**
     * By email, case-insensitively; with the password hash only when asked (sign-in), and ready
     * to be passed to `update` as `current` when `forUpdate`. Two reads by `_id` (the email's
     * entry, then the user). A user stored before the entries existed, or whose entry a crash
     * left unwritten, is found by `emailKey` instead and gets its entry then.
     */
    async findByEmail(email: string, { withPassword = false, forUpdate = false } = {}) {
      const key = emailKey(email);
      const entry = await emails.findById(key).lean<UserEmailDoc>().exec();
      const user = entry ? await byId(entry.userId, withPassword, forUpdate) : null;
      if (user?.emailKey === key) return user;
      const query = model.findOne({ emailKey: key });
      const fields = select(withPassword, forUpdate);
      if (fields) query.select(fields);
      const found = await query.lean<UserDoc>().exec();
      if (found) await emails.updateOne({ _id: key }, { $set: { userId: found._id } }, { upsert: true });
      return found;
    },

    /**
     * A page of users, newest first, with the total matching (a lower bound when the walk
     * stopped at its step budget: `stoppedAt`).
     */
    list: (filter: UserListFilter, window: { skip: number; limit: number }) =>
      page(filter, DEFAULT_USER_ORDER, { ...window, count: true, countStepsPastPage: Infinity }),

    page,

    /** The list bounds of the users stored before they were kept (at start). */
    ensureListBounds: () => Promise.all([bounds.read('createdAt'), bounds.read('updatedAt')]),

    /**
     * Gives users stored before the list keys existed (or whose keys a direct write left stale)
     * their keys, at most `limit` a call (each a revisioned write that leaves `updatedAt`: the
     * user did not change for its readers); how many were completed.
     */
    async completeListKeys(limit: number): Promise<number> {
      const incomplete = { $or: [{ createdMonth: null }, { updatedMonth: null }, { searchKeys: null }] };
      const n = await completeDerivedFields(model, incomplete, limit, userListKeys, 'User');
      // Users the lists did not find until now: counted afresh.
      if (n > 0) totals.forget();
      return n;
    },

    /** A connection's users of exactly this name (SCIM `displayName eq`): two equalities, newest first. */
    namedOfProvider: async (identityProvider: string, name: string, limit: number) =>
      newestFirst(await model.find({ identityProvider, name }).limit(limit).lean<UserDoc[]>().exec()),

    /** A connection's active users (deactivated when it is deleted): two equalities, at most `limit`. */
    activeOfProvider: (identityProvider: string, limit: number) =>
      model.find({ identityProvider, status: 'active' }).limit(limit).lean<UserDoc[]>().exec(),

    /** A group's members (id and name, newest first), at most `limit`: one equality. */
    membersOf: async (groupId: string, limit: number) =>
      newestFirst(
        await model
          .find({ groups: groupId }, { name: 1, createdAt: 1 })
          .limit(limit)
          .lean<UserDoc[]>()
          .exec(),
      ),

    /** Email and name of each of these users (for listings of what they own). */
    briefs: (ids: string[]) =>
      model
        .find({ _id: { $in: [...new Set(ids)] } }, { email: 1, name: 1 })
        .lean<UserBrief[]>()
        .exec(),

    /** Active admins (two equalities: conditions a store can answer without decoding every user). */
    countActiveAdmins: () => model.countDocuments({ role: 'admin', status: 'active' }),

    count: () => model.countDocuments(),

    /** Members of a group, whatever their status: an inactive member is still a member. */
    countMembers: (groupId: string) => model.countDocuments({ groups: groupId }),

    /**
     * Member counts of several groups: one equality count per group, eight at a time (pushed down
     * and served by the GIN index on the local store, which reads every user for one `$in`; an
     * index range each on MongoDB).
     */
    async memberCounts(groupIds: string[]): Promise<Map<string, number>> {
      const counts = new Map<string, number>();
      const ids = [...new Set(groupIds)];
      for (let n = 0; n < ids.length; n += 8) {
        const slice = ids.slice(n, n + 8);
        const found = await Promise.all(slice.map((id) => model.countDocuments({ groups: id }).exec()));
        slice.forEach((id, k) => counts.set(id, found[k]!));
      }
      return counts;
    },

    /**
     * Every user of one identity provider connection, whatever their status (a directory sync
     * compares them all with the directory): one equality, pushed down and indexed; at most `limit`.
     */
    ofProvider: async (identityProvider: string, limit: number) =>
      newestFirst(await model.find({ identityProvider }).limit(limit).lean<UserDoc[]>().exec()),

    /** Up to `limit` ids of a group's members. */
    async memberIds(groupId: string, limit: number): Promise<string[]> {
      const members = await model.find({ groups: groupId }, { _id: 1 }).limit(limit).lean<UserDoc[]>();
      return members.map((m) => m._id);
    },

    /**
     * A new user with the events that announce it (a taken email is a duplicate-key error on
     * `emailKey`), then its email's entry: written second, so an entry always names a stored user.
     */
    async insert(user: UserDoc, outbox: OutboxEntry[]): Promise<void> {
      totals.forget();
      await bounds.stored(user.createdAt, user.updatedAt);
      await insertWithOutbox(model, { ...user, ...userListKeys(user) }, outbox);
      // The user is stored: a missing or stale entry only costs the next look-up by email its
      // fallback read (which rewrites the entry), so a failure here does not fail the creation.
      await emails.create({ _id: user.emailKey, userId: user._id }).catch(() => undefined);
    },

    /**
     * Points the entry of an email (lower-cased) at this user, before an identity provider changes
     * the user's email to it: false when another user holds that email. A stale entry (its user
     * no longer has that email) is taken over; the unique `emailKey` stays the rule.
     */
    async claimEmail(key: string, userId: string): Promise<boolean> {
      const entry = await emails.findById(key).lean<UserEmailDoc>().exec();
      if (entry && entry.userId !== userId) {
        const holder = await byId(entry.userId);
        if (holder?.emailKey === key) return false;
      }
      if (entry?.userId !== userId) {
        await emails.updateOne({ _id: key }, { $set: { userId } }, { upsert: true });
      }
      return true;
    },

    /** Drops an email's entry if it still names this user (after the user's email changed). */
    async releaseEmail(key: string, userId: string): Promise<void> {
      const entry = await emails.findById(key).lean<UserEmailDoc>().exec();
      if (entry?.userId === userId) await emails.deleteOne({ _id: key });
    },

    /**
     * Read-decide-write of one user (compare-and-set on `rev`; 404, 409 as usual). `current`: the
     * user as just read with `forUpdate`, decided on instead of a second read (a stale copy only
     * loses the compare-and-set, and the next attempt reads afresh).
     */
    update<R>(
      id: string,
      decide: (current: UserDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
      current?: UserDoc,
    ) {
      return updateAggregate<UserDoc, R>(
        model,
        id,
        async (doc) => {
          const decision = withListKeys(doc, await decide(doc));
          if (decision.write) totals.forget();
          const updatedAt = decision.write?.set?.updatedAt as Date | undefined;
          if (updatedAt) await bounds.stored(undefined, updatedAt);
          return decision;
        },
        { what: 'User', current },
      );
    },
  };
}
