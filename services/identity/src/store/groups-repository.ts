import type { AggregateDecision, OutboxEntry } from '@support-desk/platform/core';
import { completeDerivedFields, insertWithOutbox, updateAggregate } from '@support-desk/platform/store';
import type { Connection } from 'mongoose';
import { createGroupDirectory, type GroupEntry } from './group-directory.js';
import { type GroupDoc, groupModel, groupNameKey } from './groups.js';

/**
 * The soft-delete rule, written once: a deleted group is kept (for read models) but not served.
 * Checked on the document read by `_id`; the list selects `live: true`, kept with `deletedAt`.
 */
const isLive = (group: GroupDoc | null): group is GroupDoc => group !== null && group.deletedAt == null;

export interface GroupsRepositoryOptions {
  /** How long group names are remembered for user views (0: read every time). */
  nameCacheTtlMs: number;
}

/**
 * Groups: every query of the aggregate and the soft-delete rule. Single reads are by `_id` alone
 * with the soft-delete rule checked on the document: FerretDB v1 pushes no other condition down
 * to its backend and would decode the whole collection for `{_id, deletedAt: null}`.
 */
export function createGroupsRepository(conn: Connection, { nameCacheTtlMs }: GroupsRepositoryOptions) {
  const model = groupModel(conn);
  const directory = createGroupDirectory(nameCacheTtlMs);
  const findAny = async (id: string) => {
    const readAt = directory.generation();
    const group = await model.findById(id).lean<GroupDoc>().exec();
    if (group) directory.remember(group, readAt);
    return group;
  };
  const liveEntries = async (ids: Iterable<string>): Promise<Map<string, GroupEntry>> => {
    const live = new Map<string, GroupEntry>();
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      const entry = directory.get(id);
      if (!entry) unknown.push(id);
      else if (!entry.deleted) live.set(id, entry);
    }
    const read = await Promise.all(unknown.map((id) => findAny(id)));
    for (const group of read) {
      if (isLive(group)) {
        live.set(group._id, {
          name: group.name,
          deleted: false,
          identityProvider: group.identityProvider ?? 'local',
        });
      }
    }
    return live;
  };
  return {
    async findLive(id: string): Promise<GroupDoc | null> {
      const group = await findAny(id);
      return isLive(group) ? group : null;
    },

    /** Deleted ones too: identity's answer to read models says `deleted: true`. */
    findAny,

    /**
     * The live group of that name (names are unique case-insensitively). One equality: a deleted
     * group's key is `deleted:<id>`, so only a live group can hold a name's key.
     */
    async findLiveByName(name: string): Promise<GroupDoc | null> {
      const group = await model
        .findOne({ nameKey: groupNameKey(name) })
        .lean<GroupDoc>()
        .exec();
      return isLive(group) ? group : null;
    },

    /** The live groups by name: one equality (pushed down), the deleted ones never read. */
    listLive: () => model.find({ live: true }).sort({ nameKey: 1 }).lean<GroupDoc[]>().exec(),

    /**
     * Gives groups stored before `live` existed theirs, at most `limit` a call (revisioned writes
     * that leave `updatedAt`); how many were completed.
     */
    async completeLive(limit: number): Promise<number> {
      const live = (g: GroupDoc) => ({ live: g.deletedAt == null });
      return completeDerivedFields(model, { live: null }, limit, live, 'Group');
    },

    /**
     * Names of the given live groups, by id (deleted or unknown ids are left out): from the
     * directory, the others read by `_id` (at once, not one after another).
     */
    async liveNames(ids: Iterable<string>): Promise<Map<string, string>> {
      const entries = await liveEntries(ids);
      return new Map([...entries].map(([id, entry]) => [id, entry.name]));
    },

    /** Who owns each of the given live groups (`local` or a connection's name), the same way. */
    async liveOwners(ids: Iterable<string>): Promise<Map<string, string>> {
      const entries = await liveEntries(ids);
      return new Map([...entries].map(([id, entry]) => [id, entry.identityProvider]));
    },

    /** The live groups one identity provider connection owns (at most `limit`), by name. */
    async ofProvider(identityProvider: string, limit: number): Promise<GroupDoc[]> {
      const groups = await model
        .find({ identityProvider, live: true })
        .limit(limit)
        .lean<GroupDoc[]>()
        .exec();
      return groups
        .filter(isLive)
        .sort((a, b) => (a.nameKey < b.nameKey ? -1 : a.nameKey > b.nameKey ? 1 : 0));
    },

    /** A new group with its event (a taken name is a duplicate-key error on `nameKey`). */
    async insert(group: GroupDoc, outbox: OutboxEntry[]): Promise<void> {
      await insertWithOutbox(model, { ...group, live: group.deletedAt == null }, outbox);
      directory.remember(group);
    },

    /** Read-decide-write of one live group (compare-and-set on `rev`; 404, 409 as usual). */
    async update<R>(
      id: string,
      decide: (current: GroupDoc) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ): Promise<R> {
      try {
        return await updateAggregate<GroupDoc, R>(
          model,
          id,
          async (current) => {
            const decision = await decide(current);
            const set = decision.write?.set;
            // `live` follows `deletedAt` in the same write.
            if (!set || !('deletedAt' in set)) return decision;
            return {
              ...decision,
              write: { ...decision.write!, set: { ...set, live: set.deletedAt == null } },
            };
          },
          { what: 'Group', visible: isLive },
        );
      } finally {
        directory.forget(id);
      }
    },

    /** Another replica changed this group (its event arrived): read it again next time. */
    forget: (id: string) => directory.forget(id),
  };
}
