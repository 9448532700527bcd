import type { Role } from '@support-desk/contracts';
import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

export interface UserDoc {
  _id: string;
  email: string;
  /** Lower-cased email: the unique key (emails are unique case-insensitively). */
  emailKey: string;
  name: string;
  role: Role;
  status: 'active' | 'inactive';
  isVip: boolean;
  /** Group ids; membership lives on the user so one write changes it with its event. */
  groups: string[];
  metadata: Record<string, string>;
  identityProvider: string;
  /** The identity provider's id of this user (SCIM `externalId`, an LDAP entry's id); null for local users. */
  externalId?: string | null;
  passwordHash: string | null;
  lastLoginAt: Date | null;
  deactivatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  rev?: number;
  /** The lists' keys (`user-keys.ts`), written with the fields they come from. */
  createdHour?: string;
  createdDay?: string;
  createdMonth?: string;
  updatedHour?: string;
  updatedDay?: string;
  updatedMonth?: string;
  nameRank?: number;
  emailRank?: number;
  searchKeys?: string[];
}

export const UserSchema = new Schema<UserDoc>(
  {
    _id: { type: String, required: true },
    email: { type: String, required: true },
    emailKey: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    role: { type: String, required: true },
    status: { type: String, required: true, default: 'active' },
    isVip: { type: Boolean, default: false },
    groups: { type: [String], default: [] },
    metadata: { type: Schema.Types.Mixed, default: {} },
    identityProvider: { type: String, default: 'local' },
    externalId: { type: String, default: null },
    passwordHash: { type: String, default: null, select: false },
    lastLoginAt: { type: Date, default: null },
    deactivatedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
    createdHour: String,
    createdDay: String,
    createdMonth: String,
    updatedHour: String,
    updatedDay: String,
    updatedMonth: String,
    nameRank: Number,
    emailRank: Number,
    searchKeys: { type: [String], default: undefined },
  },
  { collection: 'users', versionKey: false, minimize: false },
);
UserSchema.index({ createdAt: -1, _id: -1 });
// The list's other orders (`sort`). `email` sorts by `emailKey` then `_id` (the keyset's tie-break):
// its unique index alone cannot give that order, so MongoDB sorted every user in memory.
UserSchema.index({ updatedAt: -1, _id: -1 });
UserSchema.index({ name: 1, _id: 1 });
UserSchema.index({ emailKey: 1, _id: 1 });
UserSchema.index({ groups: 1 });
UserSchema.index({ role: 1, status: 1 });
// `isVip=true`, newest first; on the local store its equality is pushed down to this field's GIN
// index (scripts/infra/postgres-indexes.mjs), which an index of MongoDB's brings about.
UserSchema.index({ isVip: 1, createdAt: -1, _id: -1 });
// One hour, day or month of the time-sorted lists (`hourWalk`), one initial of the name- and
// email-sorted ones (`initialWalk`), a search's key: the equalities the local store pushes down
// (their GIN indexes come from these) and, on MongoDB, that step in list order.
UserSchema.index({ createdHour: 1, createdAt: -1, _id: -1 });
UserSchema.index({ createdDay: 1, createdAt: -1, _id: -1 });
UserSchema.index({ createdMonth: 1, createdAt: -1, _id: -1 });
UserSchema.index({ updatedHour: 1, updatedAt: -1, _id: -1 });
UserSchema.index({ updatedDay: 1, updatedAt: -1, _id: -1 });
UserSchema.index({ updatedMonth: 1, updatedAt: -1, _id: -1 });
UserSchema.index({ nameRank: 1, name: 1, _id: 1 });
UserSchema.index({ emailRank: 1, emailKey: 1, _id: 1 });
UserSchema.index({ searchKeys: 1 });
// A connection's users (SCIM lists, a sync's pass over what it owns): one equality, pushed down.
UserSchema.index({ identityProvider: 1 });
outboxPlugin(UserSchema);

export const userModel = (conn: Connection) => modelOn<UserDoc>(conn, 'User', UserSchema);

/**
 * Which user has an email: `_id` is the lower-cased email (the user's `emailKey`), so a sign-in
 * finds the account with a read by `_id`, the one condition every store answers without reading
 * the whole collection (FerretDB v1 on SQLite pushes nothing else down). Emails never change, so
 * the entry never does either; the unique index on `users.emailKey` stays the rule.
 */
export interface UserEmailDoc {
  _id: string;
  userId: string;
}

const UserEmailSchema = new Schema<UserEmailDoc>(
  { _id: { type: String, required: true }, userId: { type: String, required: true } },
  { collection: 'user_emails', versionKey: false },
);

export const userEmailModel = (conn: Connection) => modelOn<UserEmailDoc>(conn, 'UserEmail', UserEmailSchema);
