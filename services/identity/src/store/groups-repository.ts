import { type AggregateDecision, type OutboxEntry, updateAggregate } from '@support-desk/platform';
import type { Connection } from 'mongoose';
import { type GroupDoc, groupModel, groupNameKey } from './groups.js';

/** The soft-delete rule, written once: a deleted group is kept (for read models) but not served. */
const LIVE = { deletedAt: null };

/** Groups: every query of the aggregate and the soft-delete rule. */
export function createGroupsRepository(conn: Connection) {
  const model = groupModel(conn);
  return {
    findLive: (id: string) =>
      model
        .findOne({ _id: id, ...LIVE })
        .lean<GroupDoc>()
        .exec(),

    /** Deleted ones too: identity's answer to read models says `deleted: true`. */
    findAny: (id: string) => model.findById(id).lean<GroupDoc>().exec(),

    /** The live group of that name (names are unique case-insensitively). */
    findLiveByName: (name: string) =>
      model
        .findOne({ nameKey: groupNameKey(name), ...LIVE })
        .lean<GroupDoc>()
        .exec(),

    listLive: () => model.find(LIVE).sort({ nameKey: 1 }).lean<GroupDoc[]>().exec(),

    /** Names of the given live groups, by id (deleted or unknown ids are left out). */
    async liveNames(ids: Iterable<string>): Promise<Map<string, string>> {
      const unique = [...new Set(ids)];
      if (unique.length === 0) return new Map();
      const groups = await model.find({ _id: { $in: unique }, ...LIVE }, { name: 1 }).lean<GroupDoc[]>();
      return new Map(groups.map((g) => [g._id, g.name]));
    },

    /** A new group with its event (a taken name is a duplicate-key error on `nameKey`). */
    async insert(group: GroupDoc, outbox: OutboxEntry[]): Promise<void> {
      await model.create({ ...group, outbox });
    },

    /** Read-decide-write of one live group (compare-and-set on `rev`; 404, 409 as usual). */
    update<R>(
      id: string,
      decide: (current: GroupDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ) {
      return updateAggregate<GroupDoc, R>(model, id, decide, { what: 'Group', filter: LIVE });
    },
  };
}

export type GroupsRepository = ReturnType<typeof createGroupsRepository>;
