import path from 'node:path';
import { isReservedKey } from '@support-desk/contracts';
import { validationError } from '@support-desk/platform/core';

/**
 * An LDAP connection's settings: where the directory is, how to read it, how to map its entries,
 * when to sync and when to refuse. Stored loosely typed on the connection (`ldap`); this module
 * owns the shape: `ldapSettings` checks what an administrator gives and fills in the defaults.
 * The bind password is never stored: only where to read it (an environment variable of identity
 * and deskctl, or a file such as a mounted Kubernetes secret).
 */
export interface LdapSettings {
  /** `ldaps://host:port`, or `ldap://host:port` with `startTls` (or on a loopback host only). */
  url: string;
  /** Upgrade an `ldap://` connection with StartTLS before binding (RFC 4513). */
  startTls: boolean;
  bindDn: string;
  /** The variable holding the bind password (read when a sync starts): `LDAP_BIND_PASSWORD…`. */
  passwordEnv: string | null;
  /** Or the file holding it (its content, trailing newline dropped), inside `LDAP_SECRETS_DIR`. */
  passwordFile: string | null;
  baseDn: string;
  userFilter: string;
  /** Empty: groups are not synced. */
  groupFilter: string;
  attributes: LdapAttributes;
  /** Values of `attributes.active` that mean "disabled" (compared case-insensitively). */
  inactiveValues: string[];
  /** Support Desk `metadata` key → directory attribute (e.g. `department` → `departmentNumber`). */
  metadata: Record<string, string>;
  /** Minutes between scheduled syncs; 0 = on demand only (`deskctl idp sync`). */
  intervalMinutes: number;
  /** A run that would deactivate more than this share of the connection's active users stops. */
  maxDeactivatePercent: number;
  pageSize: number;
  /** Bound of each directory operation (connect, bind, each search page). */
  timeoutMs: number;
}

interface LdapAttributes {
  /** The entry's stable id: `entryUUID` (OpenLDAP), `objectGUID` (Active Directory), `uid`, … */
  externalId: string;
  email: string;
  name: string;
  /** An attribute telling whether the account is enabled (`userAccountControl` is read as AD's flag). */
  active: string | null;
  groupName: string;
  /** The group attribute listing member DNs. */
  member: string;
  /** The user attribute listing group DNs (AD, OpenLDAP's memberof overlay); empty: not read. */
  memberOf: string;
}

const LDAP_DEFAULTS = {
  userFilter: '(objectClass=inetOrgPerson)',
  groupFilter: '(objectClass=groupOfNames)',
  attributes: {
    externalId: 'entryUUID',
    email: 'mail',
    name: 'cn',
    active: null,
    groupName: 'cn',
    member: 'member',
    memberOf: 'memberOf',
  } as LdapAttributes,
  inactiveValues: ['false', 'disabled', 'inactive'],
  intervalMinutes: 15,
  maxDeactivatePercent: 20,
  pageSize: 500,
  timeoutMs: 10_000,
};

const ATTRIBUTE = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
const METADATA_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/**
 * The only variables a connection may name for its bind password: an administrator (or anyone
 * who can change a connection) must not be able to make the sync send identity's other secrets
 * (OAUTH_SIGNING_KEYS, MONGO_URL with its password, …) to a directory of their choosing.
 */
export const PASSWORD_ENV_PREFIX = 'LDAP_BIND_PASSWORD';

/** Where the bind password may come from: `LDAP_SECRETS_DIR` (a file must lie inside it). */
export interface SecretsPolicy {
  secretsDir: string;
}

/** Whether `file` (absolute) lies inside `dir`: the file itself, never `dir` or a way out of it. */
export function isInside(dir: string, file: string): boolean {
  const relative = path.relative(path.resolve(dir), path.resolve(file));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** A bind in clear (`ldap://` without StartTLS) is allowed only to this machine. */
function isLoopback(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

type Raw = Record<string, unknown>;

function text(raw: Raw, key: string, fallback?: string): string {
  const v = raw[key] ?? fallback;
  if (typeof v !== 'string' || v.trim() === '' || v.length > 1000)
    throw validationError(`ldap.${key}`, 'is required (1..1000 characters)');
  return v.trim();
}

function integer(raw: Raw, key: string, fallback: number, min: number, max: number): number {
  const v = raw[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw validationError(`ldap.${key}`, `must be an integer in ${min}..${max}`);
  return v;
}

function filter(raw: Raw, key: string, fallback: string): string {
  const v = raw[key] ?? fallback;
  if (typeof v !== 'string' || v.length > 1000) throw validationError(`ldap.${key}`, 'must be a string');
  const f = v.trim();
  // Balanced parentheses catch the usual mistake early; the server judges the rest.
  if (f !== '' && (!f.startsWith('(') || !balanced(f)))
    throw validationError(`ldap.${key}`, 'must be an LDAP filter in parentheses, e.g. (objectClass=person)');
  return f;
}

function balanced(f: string): boolean {
  let depth = 0;
  for (const c of f) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0;
}

function attribute(raw: Raw, key: string, fallback: string): string {
  const v = raw[key] ?? fallback;
  if (typeof v !== 'string' || !ATTRIBUTE.test(v))
    throw validationError(`ldap.attributes.${key}`, 'must be an attribute name');
  return v;
}

/** An attribute that may be switched off (null or ""): then "". */
const optionalAttribute = (raw: Raw, key: string, fallback: string): string =>
  raw[key] === null || raw[key] === '' || (raw[key] === undefined && fallback === '')
    ? ''
    : attribute(raw, key, fallback);

/**
 * Checks raw LDAP settings (what deskctl or the store holds) and fills in the defaults: on every
 * change and again at the start of every sync, so settings stored before a rule existed (or
 * written around the use cases) are refused too, before any password is read.
 */
export function ldapSettings(input: unknown, policy: SecretsPolicy): LdapSettings {
  if (!input || typeof input !== 'object') throw validationError('ldap', 'the LDAP settings are required');
  const raw = input as Raw;
  const url = text(raw, 'url');
  if (!/^ldaps?:\/\/[^/\s]+\/?$/.test(url))
    throw validationError('ldap.url', 'must be ldap://host[:port] or ldaps://host[:port]');
  if (raw.startTls != null && typeof raw.startTls !== 'boolean')
    throw validationError('ldap.startTls', 'must be true or false');
  const startTls = raw.startTls === true;
  if (startTls && url.startsWith('ldaps:'))
    throw validationError('ldap.startTls', 'ldaps:// is TLS already: StartTLS applies to ldap:// only');
  if (url.startsWith('ldap:') && !startTls && !isLoopback(url))
    throw validationError(
      'ldap.url',
      'ldap:// would send the bind password in clear: use ldaps://, or StartTLS (--start-tls); ldap:// alone only to a loopback host',
    );
  const passwordEnv = raw.passwordEnv == null ? null : text(raw, 'passwordEnv');
  const passwordFile = raw.passwordFile == null ? null : text(raw, 'passwordFile');
  if (passwordEnv !== null && (!ENV_NAME.test(passwordEnv) || !passwordEnv.startsWith(PASSWORD_ENV_PREFIX)))
    throw validationError(
      'ldap.passwordEnv',
      `must be an environment variable named ${PASSWORD_ENV_PREFIX}… (A-Z, 0-9, _): no other variable of identity's is read`,
    );
  if (passwordFile !== null && (!path.isAbsolute(passwordFile) || !isInside(policy.secretsDir, passwordFile)))
    throw validationError(
      'ldap.passwordFile',
      `must be a file inside LDAP_SECRETS_DIR (${policy.secretsDir}), given as an absolute path`,
    );
  if ((passwordEnv === null) === (passwordFile === null))
    throw validationError(
      'ldap.passwordEnv',
      'give either passwordEnv or passwordFile (where the bind password is)',
    );
  const attrs = (raw.attributes ?? {}) as Raw;
  if (typeof attrs !== 'object') throw validationError('ldap.attributes', 'must be an object');
  const d = LDAP_DEFAULTS.attributes;
  const unknown = Object.keys(attrs).find((k) => !Object.hasOwn(d, k));
  if (unknown !== undefined)
    throw validationError(
      'ldap.attributes',
      `${unknown} is not a field the sync maps (one of ${Object.keys(d).join(', ')})`,
    );
  const metadata = (raw.metadata ?? {}) as Raw;
  if (typeof metadata !== 'object' || Object.keys(metadata).length > 50)
    throw validationError('ldap.metadata', 'must map at most 50 metadata keys to attributes');
  for (const [k, v] of Object.entries(metadata)) {
    if (!METADATA_KEY.test(k) || isReservedKey(k))
      throw validationError('ldap.metadata', `key ${k} must match [A-Za-z0-9_-]{1,64}, and not be ${k}`);
    if (typeof v !== 'string' || !ATTRIBUTE.test(v))
      throw validationError(`ldap.metadata.${k}`, 'must be an attribute name');
  }
  const inactive = raw.inactiveValues ?? LDAP_DEFAULTS.inactiveValues;
  if (!Array.isArray(inactive) || inactive.some((v) => typeof v !== 'string') || inactive.length > 20)
    throw validationError('ldap.inactiveValues', 'must be a list of at most 20 strings');
  return {
    url,
    startTls,
    bindDn: text(raw, 'bindDn'),
    passwordEnv,
    passwordFile,
    baseDn: text(raw, 'baseDn'),
    userFilter: filter(raw, 'userFilter', LDAP_DEFAULTS.userFilter) || LDAP_DEFAULTS.userFilter,
    groupFilter: filter(raw, 'groupFilter', LDAP_DEFAULTS.groupFilter),
    attributes: {
      externalId: attribute(attrs, 'externalId', d.externalId),
      email: attribute(attrs, 'email', d.email),
      name: attribute(attrs, 'name', d.name),
      active: optionalAttribute(attrs, 'active', '') || null,
      groupName: attribute(attrs, 'groupName', d.groupName),
      member: attribute(attrs, 'member', d.member),
      memberOf: optionalAttribute(attrs, 'memberOf', d.memberOf),
    },
    inactiveValues: (inactive as string[]).map((v) => v.toLowerCase()),
    metadata: metadata as Record<string, string>,
    intervalMinutes: integer(raw, 'intervalMinutes', LDAP_DEFAULTS.intervalMinutes, 0, 7 * 24 * 60),
    maxDeactivatePercent: integer(raw, 'maxDeactivatePercent', LDAP_DEFAULTS.maxDeactivatePercent, 0, 100),
    pageSize: integer(raw, 'pageSize', LDAP_DEFAULTS.pageSize, 1, 5000),
    timeoutMs: integer(raw, 'timeoutMs', LDAP_DEFAULTS.timeoutMs, 100, 300_000),
  };
}

/** The settings as a connection stores them: checked, with every default written out. */
export const storedLdapSettings = (input: unknown, policy: SecretsPolicy): Record<string, unknown> => ({
  ...ldapSettings(input, policy),
});

/** Where identity's configuration lets bind passwords come from. */
export const secretsPolicy = (config: { LDAP_SECRETS_DIR: string }): SecretsPolicy => ({
  secretsDir: config.LDAP_SECRETS_DIR,
});
