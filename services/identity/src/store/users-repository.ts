import { LIST_COUNT_LIMIT, type Role } from '@support-desk/contracts';
import type { AggregateDecision, OutboxEntry } from '@support-desk/platform/core';
import {
  besideSeek,
  escapeRegex,
  insertWithOutbox,
  keysetQuery,
  type KeysetSeek,
  oneOf,
  selectOutbox,
  updateAggregate,
} from '@support-desk/platform/store';
import type { Connection, FilterQuery } from 'mongoose';
import { DEFAULT_USER_ORDER, userOrders, type UserSort } from './user-order.js';
import { type UserDoc, type UserEmailDoc, userEmailModel, userModel } from './users.js';

/** The users list's filters, each optional (already validated). */
export interface UserListFilter {
  /** Any of these roles, any of these statuses. */
  role?: Role[];
  status?: UserDoc['status'][];
  groupId?: string;
  isVip?: boolean;
  /** Case-insensitive substring of the name or the email. */
  search?: string;
  /** The users of one identity provider connection (SCIM lists). */
  identityProvider?: string;
  /** Exactly this name (SCIM `displayName eq`). */
  name?: string;
}

/** What one list call reads: a page by skip (with the count), or after a keyset position. */
export interface UserListWindow {
  skip: number;
  limit: number;
  seek?: KeysetSeek;
  count: boolean;
}

function listQuery(filter: UserListFilter): FilterQuery<UserDoc> {
  const query: FilterQuery<UserDoc> = {};
  if (filter.role) query.role = oneOf(filter.role);
  if (filter.status) query.status = oneOf(filter.status);
  if (filter.groupId) query.groups = filter.groupId;
  if (filter.isVip !== undefined) query.isVip = filter.isVip;
  if (filter.identityProvider) query.identityProvider = filter.identityProvider;
  if (filter.name !== undefined) query.name = filter.name;
  if (filter.search) {
    const re = new RegExp(escapeRegex(filter.search), 'i');
    query.$or = [{ name: re }, { email: re }];
  }
  return query;
}

export type UserBrief = Pick<UserDoc, '_id' | 'email' | 'name'>;

export const emailKey = (email: string) => email.trim().toLowerCase();

/** Users: every query of the aggregate (membership lives on the user). */
export function createUsersRepository(conn: Connection) {
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
  /**
   * A page of users in `sort` order, by skip or after a keyset position, and (when `count`)
   * the total matching: one find, and one count run beside it.
   */
  const page = async (filter: UserListFilter, sort: UserSort, window: UserListWindow) => {
    const query = listQuery(filter);
    const { sort: order, condition } = keysetQuery(userOrders.keys(sort), window.seek);
    const [users, total] = await Promise.all([
      model
        .find(besideSeek(query, condition))
        .sort(order)
        .skip(window.skip)
        .limit(window.limit)
        .lean<UserDoc[]>()
        .exec(),
      window.count ? model.countDocuments(query, { limit: LIST_COUNT_LIMIT }).exec() : undefined,
    ]);
    return { users, total };
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

    /** A page of users, newest first, with the total matching. */
    async list(filter: UserListFilter, window: { skip: number; limit: number }) {
      const { users, total } = await page(filter, DEFAULT_USER_ORDER, { ...window, count: true });
      return { users, total: total ?? 0 };
    },

    page,

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

    /** Member counts of several groups at once. */
    async memberCounts(groupIds: string[]): Promise<Map<string, number>> {
      const counts = await model
        .aggregate<{ _id: string; n: number }>([
          { $match: { groups: { $in: groupIds } } },
          { $unwind: '$groups' },
          { $group: { _id: '$groups', n: { $sum: 1 } } },
        ])
        .exec();
      return new Map(counts.map((c) => [c._id, c.n]));
    },

    /**
     * Every user of one identity provider connection, whatever their status (a directory sync
     * compares them all with the directory): one equality, pushed down and indexed; at most `limit`.
     */
    ofProvider: (identityProvider: string, limit: number) =>
      model.find({ identityProvider }).limit(limit).lean<UserDoc[]>().exec(),

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
      await insertWithOutbox(model, user, outbox);
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
      return updateAggregate<UserDoc, R>(model, id, decide, { what: 'User', current });
    },
  };
}
