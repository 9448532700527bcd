import { findIdentityProvider, runLdapSync, type SyncRunView } from '@support-desk/identity/admin';
import { UsageError } from '../args.js';
import type { Run } from '../command.js';
import { LDAP_OPTIONS } from '../commands/ldap.js';

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

export const runs: Record<string, Run> = {
  async 'idp sync'(deps, _ctx, v, pos) {
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
};
