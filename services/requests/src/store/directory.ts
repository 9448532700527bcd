import type { Role } from '@support-desk/contracts';
import { isDuplicateKeyError } from '@support-desk/platform/core';
import { type Connection, type Model, Schema } from 'mongoose';

/** The users read model: identity's users as this service needs them. */
export interface UserEntry {
  _id: string;
  email: string;
  name: string;
  role: Role;
  status: 'active' | 'inactive';
  isVip: boolean;
  groupIds: string[];
  /** identity's updatedAt of the snapshot stored. */
  updatedAt: Date;
  syncedAt: Date;
}

export interface GroupEntry {
  _id: string;
  name: string;
  deleted: boolean;
  syncedAt: Date;
}

const UserEntrySchema = new Schema<UserEntry>(
  {
    _id: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    role: { type: String, required: true },
    status: { type: String, required: true },
    isVip: { type: Boolean, required: true },
    groupIds: { type: [String], default: [] },
    updatedAt: { type: Date, required: true },
    syncedAt: { type: Date, required: true },
  },
  { collection: 'users_read_model', versionKey: false },
);

const GroupEntrySchema = new Schema<GroupEntry>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    deleted: { type: Boolean, required: true },
    syncedAt: { type: Date, required: true },
  },
  { collection: 'groups_read_model', versionKey: false },
);

type UserEntryModel = Model<UserEntry>;
type GroupEntryModel = Model<GroupEntry>;

function userEntryModel(conn: Connection): UserEntryModel {
  return (conn.models.UserEntry as UserEntryModel) ?? conn.model<UserEntry>('UserEntry', UserEntrySchema);
}

function groupEntryModel(conn: Connection): GroupEntryModel {
  return (
    (conn.models.GroupEntry as GroupEntryModel) ?? conn.model<GroupEntry>('GroupEntry', GroupEntrySchema)
  );
}

/**
 * Two first sightings of one id (a request and the event consumer, or two requests) both try to
 * insert it; the loser gets a duplicate key. The entry exists by then, so once more replaces it.
 */
async function upsert(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    await write();
  }
}

/** The users and groups read models: what this service knows of identity's users and groups. */
export function createDirectoryRepository(conn: Connection) {
  const users = userEntryModel(conn);
  const groups = groupEntryModel(conn);
  return {
    findUser: (id: string) => users.findById(id).lean<UserEntry>().exec(),
    findGroup: (id: string) => groups.findById(id).lean<GroupEntry>().exec(),
    /**
     * One query for a page of ids: by `_id` for one (the shape every store answers without
     * reading the collection), else `$in`, which FerretDB answers by reading the users read
     * model (one small document per user), still cheaper than a query per id.
     */
    async findUsers(ids: string[]): Promise<UserEntry[]> {
      const unique = [...new Set(ids)];
      if (unique.length === 0) return [];
      if (unique.length === 1) {
        const one = await users.findById(unique[0]).lean<UserEntry>();
        return one ? [one] : [];
      }
      return users.find({ _id: { $in: unique } }).lean<UserEntry[]>();
    },
    saveUser: (entry: UserEntry) =>
      upsert(() => users.replaceOne({ _id: entry._id }, entry, { upsert: true })),
    saveGroup: (entry: GroupEntry) =>
      upsert(() => groups.replaceOne({ _id: entry._id }, entry, { upsert: true })),
    removeUser: async (id: string) => {
      await users.deleteOne({ _id: id });
    },
    removeGroup: async (id: string) => {
      await groups.deleteOne({ _id: id });
    },
  };
}

export type DirectoryRepository = ReturnType<typeof createDirectoryRepository>;
