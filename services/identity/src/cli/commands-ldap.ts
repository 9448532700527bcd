import { findIdentityProvider } from '../use-cases/identity-providers.js';
import { runLdapSync } from '../use-cases/ldap-sync.js';
import type { SyncRunView } from '../use-cases/ldap-sync-view.js';
import { UsageError } from './args.js';
import type { Command, Options } from './command.js';

/**
 * The LDAP side of `deskctl idp`: the directory settings' flags (given to `idp create` and
 * `idp update`), and `idp sync NAME`, one sync now (the same run the schedule makes).
 */
export const LDAP_OPTIONS: Options = {
  url: {
    type: 'string',
    value: 'ldaps://HOST:PORT',
    description:
      'the directory: ldaps://, or ldap:// with --start-tls (ldap:// alone only to a loopback host)',
  },
  'start-tls': { type: 'boolean', description: 'upgrade an ldap:// connection with StartTLS before binding' },
  'bind-dn': { type: 'string', value: 'DN', description: 'the DN deskctl binds as to read the directory' },
  'password-env': {
    type: 'string',
    value: 'VAR',
    description: 'environment variable holding the bind password (named LDAP_BIND_PASSWORD…)',
  },
  'password-file': {
    type: 'string',
    value: 'PATH',
    description: 'file holding the bind password, inside LDAP_SECRETS_DIR (/run/secrets)',
  },
  'base-dn': { type: 'string', value: 'DN', description: 'where users and groups are searched' },
  'user-filter': { type: 'string', value: 'FILTER', description: 'LDAP filter of the users to sync' },
  'group-filter': { type: 'string', value: 'FILTER', description: 'LDAP filter of the groups to sync' },
  attribute: {
    type: 'string',
    multiple: true,
    value: 'KEY=ATTR',
    description: 'which directory attribute gives a user field (email, name, ...)',
  },
  metadata: {
    type: 'string',
    multiple: true,
    value: 'KEY=ATTR',
    description: 'attribute copied into user metadata',
  },
  'inactive-value': {
    type: 'string',
    multiple: true,
    value: 'V',
    description: 'a status attribute value meaning the account is inactive',
  },
  interval: { type: 'string', value: '15m|1h|0', description: 'how often the sync runs (0: on demand only)' },
  'max-deactivate-percent': {
    type: 'string',
    value: 'P',
    description: 'stop a run that would deactivate more than this share of the synced users',
  },
  'page-size': { type: 'string', value: 'N', description: 'LDAP paged-search page size' },
  'timeout-ms': { type: 'string', value: 'N', description: 'timeout of each directory operation' },
};

const TEXT_FLAGS: Record<string, string> = {
  url: 'url',
  'bind-dn': 'bindDn',
  'base-dn': 'baseDn',
  'user-filter': 'userFilter',
  'group-filter': 'groupFilter',
};

const INTEGER_FLAGS: Record<string, string> = {
  'max-deactivate-percent': 'maxDeactivatePercent',
  'page-size': 'pageSize',
  'timeout-ms': 'timeoutMs',
};

/** `--interval 15m` → minutes (`0` = on demand only). */
function intervalMinutes(value: string): number {
  const m = /^(\d{1,5})([mhd]?)$/.exec(value.trim());
  if (!m || (m[1] !== '0' && !m[2])) throw new UsageError('--interval must look like 15m, 1h, 1d or 0');
  return Number(m[1]) * { '': 0, m: 1, h: 60, d: 1440 }[m[2] as '' | 'm' | 'h' | 'd'];
}

/** `KEY=ATTR` pairs (repeatable flags) → a map (without a prototype: a KEY is only a key). */
function pairs(values: unknown, flag: string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const pair of values as string[]) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`--${flag} must look like KEY=ATTRIBUTE (got "${pair}")`);
    out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return out;
}

/**
 * The LDAP settings the flags give, laid over `base` (what the connection has: `idp update`
 * changes only what is given); undefined when no LDAP flag was given. The use case checks them.
 */
export function ldapSettingsFrom(
  v: Record<string, unknown>,
  base: Record<string, unknown> | null,
): Record<string, unknown> | undefined {
  if (!Object.keys(LDAP_OPTIONS).some((flag) => v[flag] !== undefined)) return undefined;
  const s: Record<string, unknown> = { ...(base ?? {}) };
  for (const [flag, key] of Object.entries(TEXT_FLAGS)) if (v[flag] !== undefined) s[key] = v[flag];
  for (const [flag, key] of Object.entries(INTEGER_FLAGS)) {
    if (v[flag] === undefined) continue;
    if (!/^\d{1,7}$/.test(v[flag] as string)) throw new UsageError(`--${flag} must be a whole number`);
    s[key] = Number(v[flag]);
  }
  if (v['password-env'] !== undefined)
    Object.assign(s, { passwordEnv: v['password-env'], passwordFile: null });
  if (v['password-file'] !== undefined)
    Object.assign(s, { passwordFile: v['password-file'], passwordEnv: null });
  if (v['password-env'] !== undefined && v['password-file'] !== undefined)
    throw new UsageError('give --password-env or --password-file, not both');
  if (v.attribute) s.attributes = { ...((s.attributes as object) ?? {}), ...pairs(v.attribute, 'attribute') };
  if (v.metadata) s.metadata = pairs(v.metadata, 'metadata');
  if (v['inactive-value']) s.inactiveValues = v['inactive-value'];
  if (v.interval !== undefined) s.intervalMinutes = intervalMinutes(v.interval as string);
  if (v['start-tls'] !== undefined) s.startTls = v['start-tls'] === true;
  return s;
}

/** The run in a few lines: what changed, and why it stopped or failed if it did. */
export function describeRun(r: SyncRunView): string {
  return [
    `${r.provider}: ${r.outcome} in ${r.durationMs} ms (${r.trigger}, ${r.finishedAt})`,
    `  users: ${r.usersCreated} created, ${r.usersUpdated} updated, ${r.usersDeactivated} deactivated`,
    `  groups changed: ${r.groupsChanged}, memberships changed: ${r.membershipsChanged}`,
    ...(r.skipped ? [`  directory entries skipped: ${r.skipped}`] : []),
    ...(r.errors ? [`  changes failed: ${r.errors}`] : []),
    ...(r.reason ? [`  ${r.outcome === 'succeeded' ? 'note' : 'reason'}: ${r.reason}`] : []),
  ].join('\n');
}

export const ldapCommands: Record<string, Command> = {
  'idp sync': {
    description:
      'sync an LDAP connection now (the same run the schedule makes); exit 1 when it stopped or failed',
    options: { 'max-deactivate-percent': LDAP_OPTIONS['max-deactivate-percent'] },
    args: [{ name: 'NAME', description: 'the identity provider', required: true }],
    examples: ['idp sync corp', 'idp sync corp --max-deactivate-percent 50'],
    async run(deps, _ctx, v, pos) {
      if (!pos[0]) throw new UsageError('the identity provider name is required');
      const override = ldapSettingsFrom({ 'max-deactivate-percent': v['max-deactivate-percent'] }, {});
      await findIdentityProvider(deps, pos[0]);
      const run = (await runLdapSync(deps, pos[0], {
        trigger: 'cli',
        ...(override?.maxDeactivatePercent !== undefined
          ? { maxDeactivatePercent: override.maxDeactivatePercent as number }
          : {}),
      }))!;
      // A run that stopped or failed is still recorded (and its event sent); the exit code says it.
      const ok = run.outcome === 'succeeded' || run.outcome === 'partial';
      return { json: run, text: describeRun(run), exitCode: ok ? 0 : 1 };
    },
  },
};
