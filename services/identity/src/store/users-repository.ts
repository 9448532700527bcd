import type { Role } from '@support-desk/contracts';
import {
  type AggregateDecision,
  escapeRegex,
  type OutboxEntry,
  updateAggregate,
} from '@support-desk/platform';
import type { Connection, FilterQuery } from 'mongoose';
import { type UserDoc, userModel } from './users.js';

/** The users list's filters, each optional (already validated). */
export interface UserListFilter {
  role?: Role;
  status?: 'active' | 'inactive';
  groupId?: string;
  isVip?: boolean;
  /** Case-insensitive substring of the name or the email. */
  search?: string;
}

export type UserBrief = Pick<UserDoc, '_id' | 'email' | 'name'>;

export const emailKey = (email: string) => email.trim().toLowerCase();

/** Users: every query of the aggregate (membership lives on the user). */
export function createUsersRepository(conn: Connection) {
  const model = userModel(conn);
  return {
    findById: (id: string) => model.findById(id).lean<UserDoc>().exec(),

    /** By email, case-insensitively; with the password hash only when asked (sign-in). */
    findByEmail(email: string, { withPassword = false } = {}): Promise<UserDoc | null> {
      const query = model.findOne({ emailKey: emailKey(email) });
      if (withPassword) query.select('+passwordHash');
      return query.lean<UserDoc>().exec();
    },

    /** A page of users, newest first, with the total matching. */
    async list(filter: UserListFilter, page: { skip: number; limit: number }) {
      const query: FilterQuery<UserDoc> = {};
      if (filter.role) query.role = filter.role;
      if (filter.status) query.status = filter.status;
      if (filter.groupId) query.groups = filter.groupId;
      if (filter.isVip !== undefined) query.isVip = filter.isVip;
      if (filter.search) {
        const re = new RegExp(escapeRegex(filter.search), 'i');
        query.$or = [{ name: re }, { email: re }];
      }
      const [users, total] = await Promise.all([
        model
          .find(query)
          .sort({ createdAt: -1, _id: -1 })
          .skip(page.skip)
          .limit(page.limit)
          .lean<UserDoc[]>(),
        model.countDocuments(query),
      ]);
      return { users, total };
    },

    /** Email and name of each of these users (for listings of what they own). */
    briefs: (ids: string[]) =>
      model
        .find({ _id: { $in: [...new Set(ids)] } }, { email: 1, name: 1 })
        .lean<UserBrief[]>()
        .exec(),

    /** Active admins, leaving one out (is anyone else left to administer?). */
    countActiveAdmins: (except?: string) =>
      model.countDocuments({ role: 'admin', status: 'active', ...(except ? { _id: { $ne: except } } : {}) }),

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

    /** Up to `limit` ids of a group's members. */
    async memberIds(groupId: string, limit: number): Promise<string[]> {
      const members = await model.find({ groups: groupId }, { _id: 1 }).limit(limit).lean<UserDoc[]>();
      return members.map((m) => m._id);
    },

    /** A new user with the events that announce it (a taken email is a duplicate-key error). */
    async insert(user: UserDoc, outbox: OutboxEntry[]): Promise<void> {
      await model.create({ ...user, outbox });
    },

    /** Read-decide-write of one user (compare-and-set on `rev`; 404, 409 as usual). */
    update<R>(
      id: string,
      decide: (current: UserDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ) {
      return updateAggregate<UserDoc, R>(model, id, decide, { what: 'User' });
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
