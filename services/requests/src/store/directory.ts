import type { Role } from '@support-desk/contracts';
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

export type UserEntryModel = Model<UserEntry>;
export type GroupEntryModel = Model<GroupEntry>;

export function userEntryModel(conn: Connection): UserEntryModel {
  return (conn.models.UserEntry as UserEntryModel) ?? conn.model<UserEntry>('UserEntry', UserEntrySchema);
}

export function groupEntryModel(conn: Connection): GroupEntryModel {
  return (
    (conn.models.GroupEntry as GroupEntryModel) ?? conn.model<GroupEntry>('GroupEntry', GroupEntrySchema)
  );
}
