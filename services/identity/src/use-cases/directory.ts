import type { LdapSettings } from './ldap-settings.js';

/**
 * What the LDAP sync needs of a directory reader (ldap/directory.ts is the one, with ldapts): the
 * snapshot it reads, and the settings it reads by.
 */

export interface DirectoryUser {
  externalId: string;
  dn: string;
  email: string;
  name: string;
  active: boolean;
  metadata: Record<string, string>;
  /** External ids of the directory groups the user is a member of. */
  groups: string[];
}

export interface DirectoryGroup {
  externalId: string;
  dn: string;
  name: string;
}

export interface DirectorySnapshot {
  users: DirectoryUser[];
  groups: DirectoryGroup[];
  /** Entries the filters selected that cannot become users (no id, no mail, …), with why. */
  skipped: { dn: string; reason: string }[];
}

/** What the reader needs of a connection's LDAP settings. */
export type DirectoryQuery = Pick<
  LdapSettings,
  | 'url'
  | 'startTls'
  | 'bindDn'
  | 'baseDn'
  | 'userFilter'
  | 'groupFilter'
  | 'attributes'
  | 'inactiveValues'
  | 'metadata'
  | 'pageSize'
  | 'timeoutMs'
>;

/** Between pages: the sync renews its lease there (and stops the read by throwing). */
export type PageHook = () => Promise<void>;

/** DNs compare case-insensitively and without the spaces some servers put after commas. */
export const normalizeDn = (dn: string) =>
  dn
    .trim()
    .replace(/\s*,\s*/g, ',')
    .toLowerCase();
