import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

export interface GroupDoc {
  _id: string;
  name: string;
  /**
   * Lower-cased name: the unique key. A deleted group's key becomes `deleted:<id>` so its name
   * can be reused (partial unique indexes are not available on FerretDB).
   */
  nameKey: string;
  description: string;
  /** The connection that owns the group (`local`: made through /v1 or deskctl). */
  identityProvider?: string;
  /** The identity provider's id of the group; null for local groups. */
  externalId?: string | null;
  deletedAt: Date | null;
  /**
   * Not deleted (`deletedAt` null), as a top-level equality the local store pushes down: the
   * groups list reads the live groups only (`deletedAt: null` is pushed down nowhere).
   */
  live?: boolean;
  createdAt: Date;
  updatedAt: Date;
  rev?: number;
}

const GroupSchema = new Schema<GroupDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    nameKey: { type: String, required: true, unique: true },
    description: { type: String, default: '' },
    identityProvider: { type: String, default: 'local' },
    externalId: { type: String, default: null },
    deletedAt: { type: Date, default: null },
    live: Boolean,
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'groups', versionKey: false },
);
// A connection's groups (a directory sync's pass over what it owns): one equality, pushed down.
GroupSchema.index({ identityProvider: 1 });
// The groups list: the live ones by name.
GroupSchema.index({ live: 1, nameKey: 1 });
outboxPlugin(GroupSchema);

export const groupModel = (conn: Connection) => modelOn<GroupDoc>(conn, 'Group', GroupSchema);

export const groupNameKey = (name: string) => name.trim().toLowerCase();
