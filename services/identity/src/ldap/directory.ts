import { Client, type Entry } from 'ldapts';
import type {
  DirectoryGroup,
  DirectoryQuery,
  DirectorySnapshot,
  DirectoryUser,
  PageHook,
} from '../use-cases/directory.js';
import { normalizeDn } from '../use-cases/directory.js';

/**
 * Reads an LDAP directory (with ldapts, a maintained pure-TypeScript client) into a snapshot the
 * sync can compare with Support Desk: every user and group the filters select, paged, mapped by
 * the configured attributes. The whole snapshot is read before anything is decided, so a
 * directory that fails half way yields an error, never half a directory.
 */

/** The directory could not be read (unreachable, refused the bind, a search failed, too large). */
class DirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DirectoryError';
  }
}

/** Users and groups read in one sync at most: the snapshot is held in memory. */
const MAX_DIRECTORY_ENTRIES = 100_000;

type Value = Entry[string];

/** One entry's attributes by lower-cased name (servers answer in their own case). */
function attributesOf(entry: Entry): Map<string, Value> {
  return new Map(Object.entries(entry).map(([k, v]) => [k.toLowerCase(), v]));
}

function strings(v: Value | undefined): string[] {
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((x) => (Buffer.isBuffer(x) ? guidText(x) : String(x))).filter((x) => x !== '');
}

const first = (attrs: Map<string, Value>, name: string) => strings(attrs.get(name.toLowerCase()))[0] ?? '';

/** Active Directory's objectGUID (16 bytes, the first three fields little-endian) as a UUID. */
function guidText(b: Buffer): string {
  if (b.length !== 16) return b.toString('hex');
  const h = (from: number, to: number, reverse: boolean) => {
    const part = [...b.subarray(from, to)];
    return (reverse ? part.reverse() : part).map((x) => x.toString(16).padStart(2, '0')).join('');
  };
  return `${h(0, 4, true)}-${h(4, 6, true)}-${h(6, 8, true)}-${h(8, 10, false)}-${h(10, 16, false)}`;
}

function isActive(attrs: Map<string, Value>, q: DirectoryQuery): boolean {
  const name = q.attributes.active;
  if (!name) return true;
  const value = first(attrs, name);
  // Active Directory: bit 2 (ACCOUNTDISABLE) of userAccountControl.
  if (name.toLowerCase() === 'useraccountcontrol') return (Number(value) & 2) === 0;
  return !q.inactiveValues.includes(value.toLowerCase());
}

async function search(
  client: Client,
  q: DirectoryQuery,
  filter: string,
  attributes: string[],
  onPage: PageHook,
) {
  const entries: Entry[] = [];
  const pages = client.searchPaginated(q.baseDn, {
    scope: 'sub',
    filter,
    attributes,
    paged: { pageSize: q.pageSize },
    sizeLimit: MAX_DIRECTORY_ENTRIES + 1,
    timeLimit: Math.ceil(q.timeoutMs / 1000),
    explicitBufferAttributes: attributes.filter((a) => a.toLowerCase() === 'objectguid'),
  });
  for await (const page of pages) {
    entries.push(...page.searchEntries);
    if (entries.length > MAX_DIRECTORY_ENTRIES)
      throw new DirectoryError(`more than ${MAX_DIRECTORY_ENTRIES} entries match ${filter}`);
    await onPage();
  }
  return entries;
}

/** Binds with the connection's account and reads the users and groups its filters select. */
export async function readDirectory(
  q: DirectoryQuery,
  password: string,
  onPage: PageHook = async () => undefined,
): Promise<DirectorySnapshot> {
  const client = new Client({ url: q.url, timeout: q.timeoutMs, connectTimeout: q.timeoutMs });
  // The hook's own error (a lost lease) passes through as it is; the rest is the directory's.
  let hookError: unknown;
  const hook = async () => {
    try {
      await onPage();
    } catch (err) {
      hookError = err;
      throw err;
    }
  };
  try {
    // Never a bind in clear unless the settings allowed it (ldap:// to a loopback host): a
    // server that refuses StartTLS fails the run here, before the password is sent.
    if (q.startTls) await client.startTLS({ servername: new URL(q.url).hostname });
    await client.bind(q.bindDn, password);
    const a = q.attributes;
    const metadataAttributes = Object.values(q.metadata);
    const userEntries = await search(
      client,
      q,
      q.userFilter,
      [
        a.externalId,
        a.email,
        a.name,
        'displayName',
        ...(a.active ? [a.active] : []),
        ...(a.memberOf ? [a.memberOf] : []),
        ...metadataAttributes,
      ],
      hook,
    );
    const groupEntries = q.groupFilter
      ? await search(client, q, q.groupFilter, [a.externalId, a.groupName, a.member], hook)
      : [];
    return snapshotOf(q, userEntries, groupEntries);
  } catch (err) {
    if (err instanceof DirectoryError || err === hookError) throw err;
    throw new DirectoryError(`${q.url}: ${describeFailure(err as Error)}`);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/**
 * ldapts says what failed in the error's class (InvalidCredentialsError: "invalid credentials")
 * and the result code in its message; the network says it in the message. Never the password.
 */
function describeFailure(err: Error): string {
  const kind =
    err.name && err.name !== 'Error'
      ? err.name
          .replace(/Error$/, '')
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .toLowerCase()
      : '';
  return [kind, err.message.trim()].filter(Boolean).join(': ') || 'unknown error';
}

function snapshotOf(q: DirectoryQuery, userEntries: Entry[], groupEntries: Entry[]): DirectorySnapshot {
  const a = q.attributes;
  const skipped: DirectorySnapshot['skipped'] = [];
  const groups: DirectoryGroup[] = [];
  const groupByDn = new Map<string, DirectoryGroup>();
  const membersByDn = new Map<string, Set<string>>();
  for (const entry of groupEntries) {
    const attrs = attributesOf(entry);
    const group = { externalId: first(attrs, a.externalId), dn: entry.dn, name: first(attrs, a.groupName) };
    if (!group.externalId || !group.name) {
      skipped.push({
        dn: entry.dn,
        reason: `group without ${group.externalId ? a.groupName : a.externalId}`,
      });
      continue;
    }
    groups.push(group);
    groupByDn.set(normalizeDn(entry.dn), group);
    for (const member of strings(attrs.get(a.member.toLowerCase()))) {
      const key = normalizeDn(member);
      membersByDn.set(key, (membersByDn.get(key) ?? new Set()).add(group.externalId));
    }
  }
  const users: DirectoryUser[] = [];
  for (const entry of userEntries) {
    const attrs = attributesOf(entry);
    const externalId = first(attrs, a.externalId);
    const email = first(attrs, a.email);
    const name = first(attrs, a.name) || first(attrs, 'displayName');
    const missing = !externalId ? a.externalId : !email ? a.email : !name ? a.name : null;
    if (missing) {
      skipped.push({ dn: entry.dn, reason: `user without ${missing}` });
      continue;
    }
    const memberships = new Set(membersByDn.get(normalizeDn(entry.dn)) ?? []);
    if (a.memberOf) {
      for (const dn of strings(attrs.get(a.memberOf.toLowerCase()))) {
        const group = groupByDn.get(normalizeDn(dn));
        if (group) memberships.add(group.externalId);
      }
    }
    const metadata: Record<string, string> = {};
    for (const [key, attribute] of Object.entries(q.metadata)) {
      const value = first(attrs, attribute);
      if (value) metadata[key] = value.slice(0, 500);
    }
    users.push({
      externalId,
      dn: entry.dn,
      email,
      name,
      active: isActive(attrs, q),
      metadata,
      groups: [...memberships].sort(),
    });
  }
  return { users, groups, skipped };
}
