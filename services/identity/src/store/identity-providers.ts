import type { Role } from '@support-desk/contracts';
import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from './model.js';

export type IdentityProviderKind = 'scim' | 'ldap';

/**
 * Members of the identity provider group `group` names get `role`: its external id (SCIM
 * `externalId`, the LDAP entry's id), its Support Desk id, or (LDAP) its DN; never its display name.
 */
export interface GroupRoleRule {
  group: string;
  role: Role;
}

/**
 * An identity provider connection: where users and groups come from (SCIM pushes them, an LDAP
 * sync pulls them). `_id` is the connection's name, a slug, so every look-up (a SCIM call names
 * its connection in its token) is a read by `_id`, the one condition every store pushes down.
 */
export interface IdentityProviderDoc {
  _id: string;
  kind: IdentityProviderKind;
  defaultRole: Role;
  groupRoles: GroupRoleRule[];
  /** A disabled connection's token is refused and it is not synced; its users stay as they are. */
  disabled: boolean;
  /** SCIM: SHA-256 (hex) of the bearer token's secret; the token itself is never stored. */
  tokenHash: string | null;
  tokenCreatedAt: Date | null;
  /**
   * LDAP: the directory's settings (url, bindDn, password reference, baseDn, filters, attribute
   * mapping, schedule, safety threshold). Loosely typed here: the LDAP sync owns its shape and
   * validates it (see use-cases/identity-providers.ts `LdapSettings`).
   */
  ldap: Record<string, unknown> | null;
  /** LDAP: how the latest sync run ended (the scheduler's "is one due?" reads it). */
  lastSync?: SyncRunSummary | null;
  /**
   * Deleted connections are kept (their last event leaves through the document's outbox) but not
   * served; creating one of the same name again starts it afresh.
   */
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  rev?: number;
}

export type SyncOutcome = 'succeeded' | 'partial' | 'stopped' | 'failed' | 'interrupted';

/** One directory sync run, as the connection remembers its latest and its event tells. */
export interface SyncRunSummary {
  trigger: 'schedule' | 'cli';
  outcome: SyncOutcome;
  /** Why a run stopped, failed or was interrupted; the first errors of a partial run. */
  reason: string | null;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  usersCreated: number;
  usersUpdated: number;
  usersDeactivated: number;
  groupsChanged: number;
  membershipsChanged: number;
  /** Directory entries left out (no id or mail, duplicates). */
  skipped: number;
  /** Changes that failed (e.g. a mail already used by a local user); the rest went on. */
  errors: number;
}

const GroupRoleSchema = new Schema<GroupRoleRule>(
  { group: { type: String, required: true }, role: { type: String, required: true } },
  { _id: false },
);

const IdentityProviderSchema = new Schema<IdentityProviderDoc>(
  {
    _id: { type: String, required: true },
    kind: { type: String, required: true },
    defaultRole: { type: String, required: true },
    groupRoles: { type: [GroupRoleSchema], default: [] },
    disabled: { type: Boolean, default: false },
    tokenHash: { type: String, default: null, select: false },
    tokenCreatedAt: { type: Date, default: null },
    ldap: { type: Schema.Types.Mixed, default: null },
    lastSync: { type: Schema.Types.Mixed, default: null },
    deletedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    /** Concurrency token: every update of the aggregate is conditioned on it and bumps it. */
    rev: { type: Number, default: 0 },
  },
  { collection: 'identity_providers', versionKey: false, minimize: false },
);
outboxPlugin(IdentityProviderSchema);

export const identityProviderModel = (conn: Connection) =>
  modelOn<IdentityProviderDoc>(conn, 'IdentityProvider', IdentityProviderSchema);

/**
 * Which user or group a connection's external id names: `_id` is `<kind>:<connection>:<externalId>`
 * (kind `user` or `group`), so the provider's id is found with one read by `_id`, and two
 * provisioning calls racing to create the same external id meet on the unique `_id` (an insert
 * with a unique `_id` is atomic on every store). Written before the user or group it names; an
 * entry naming nothing (a crash between) is taken over by the next creation.
 */
export interface ExternalIdDoc {
  _id: string;
  resourceId: string;
}

const ExternalIdSchema = new Schema<ExternalIdDoc>(
  { _id: { type: String, required: true }, resourceId: { type: String, required: true } },
  { collection: 'external_ids', versionKey: false },
);

export const externalIdModel = (conn: Connection) =>
  modelOn<ExternalIdDoc>(conn, 'ExternalId', ExternalIdSchema);

export const externalKey = (kind: 'user' | 'group', connection: string, externalId: string) =>
  `${kind}:${connection}:${externalId}`;
