import { ROLES, type Role } from '@support-desk/contracts';
import {
  countOf,
  createIdentityProvider,
  deleteIdentityProvider,
  type Deps,
  findIdentityProvider,
  type GroupRoleRule,
  IDENTITY_PROVIDER_KINDS,
  type IdentityProviderKind,
  type IdentityProviderView,
  listIdentityProviders,
  rotateScimToken,
  scimBaseUrl,
  toView,
  updateIdentityProvider,
} from '@support-desk/identity/admin';
import { required, UsageError } from '../args.js';
import { oneOf, type Run, when } from '../command.js';
import { idpCommands } from '../commands/idp.js';
import { describeRun, ldapSettingsFrom } from './ldap.js';
import { listRun, pageOf } from './list.js';

/** `--group-role "Admins=admin"` (repeatable) → rules; the group name may hold `=`, the role may not. */
export function groupRolesFrom(value: unknown): GroupRoleRule[] | undefined {
  if (value === undefined) return undefined;
  return (value as string[]).map((rule) => {
    const at = rule.lastIndexOf('=');
    const group = rule.slice(0, at).trim();
    const role = rule.slice(at + 1).trim();
    if (at < 1 || !group || !ROLES.includes(role as Role)) {
      throw new UsageError(`--group-role must look like "GROUP=${ROLES.join('|')}" (got "${rule}")`);
    }
    return { group, role: role as Role };
  });
}

const describe = (v: IdentityProviderView) =>
  [
    `${v.name}  kind=${v.kind}  default-role=${v.defaultRole}${v.disabled ? '  DISABLED' : ''}`,
    ...v.groupRoles.map((r) => `  group "${r.group}" → ${r.role}`),
    ...(v.tokenCreatedAt ? [`  SCIM token created ${v.tokenCreatedAt}`] : []),
    ...(v.ldap ? [`  directory ${String(v.ldap.url)} base ${String(v.ldap.baseDn)}`] : []),
    ...(v.lastSync ? [`  last sync: ${describeRun(v.lastSync).replace(/\n/g, '\n  ')}`] : []),
    ...v.warnings.map((w) => `  warning: ${w}`),
  ].join('\n');

/** What to give the provider: where SCIM is served (the gateway's public origin) and the token. */
const tokenText = (deps: Deps, token: string) =>
  `\n\n  SCIM base URL: ${scimBaseUrl(deps.config)}\n  bearer token:  ${token}\n\nStore it now: it is shown only once.`;

const nameOf = (pos: string[]) => {
  if (!pos[0]) throw new UsageError('the identity provider name is required');
  return pos[0];
};

export const runs: Record<string, Run> = {
  async 'idp create'(deps, ctx, v, pos) {
    const kind = oneOf(required(v, 'kind'), IDENTITY_PROVIDER_KINDS, 'kind') as IdentityProviderKind;
    const created = await createIdentityProvider(deps, ctx, {
      name: nameOf(pos),
      kind,
      defaultRole: oneOf(v['default-role'], ROLES, 'default-role'),
      groupRoles: groupRolesFrom(v['group-role']),
      ldap: ldapSettingsFrom(v, null) ?? null,
    });
    const token = 'token' in created ? tokenText(deps, created.token as string) : '';
    return { json: created, text: `created identity provider ${describe(created)}${token}` };
  },
  async 'idp update'(deps, ctx, v, pos) {
    const defaultRole = oneOf(v['default-role'], ROLES, 'default-role');
    const groupRoles = groupRolesFrom(v['group-role']);
    const current = ldapSettingsFrom(v, {}) ? await findIdentityProvider(deps, nameOf(pos)) : null;
    const ldap = current ? ldapSettingsFrom(v, current.ldap) : undefined;
    if (!defaultRole && !groupRoles && !ldap)
      throw new UsageError('nothing to change: give --default-role, --group-role or LDAP settings');
    const view = await updateIdentityProvider(deps, ctx, nameOf(pos), {
      ...(defaultRole ? { defaultRole } : {}),
      ...(groupRoles ? { groupRoles } : {}),
      ...(ldap ? { ldap } : {}),
    });
    return { json: view, text: `updated ${describe(view)}` };
  },
  'idp list': listRun<IdentityProviderView>(idpCommands['idp list'], {
    key: 'identityProviders',
    columns: ['name', 'kind', 'default role', 'group rules', 'status', 'last sync'],
    row: (v) => [
      v.name,
      v.kind,
      v.defaultRole,
      v.groupRoles.map((r) => `${r.group}=${r.role}`).join(', ') || '-',
      v.disabled ? 'disabled' : 'enabled',
      v.lastSync ? `${v.lastSync.outcome} ${when(v.lastSync.finishedAt)}` : '-',
    ],
    fetch: async (deps, _ctx, _v, _pos, _nc, request) => pageOf(await listIdentityProviders(deps), request),
  }),
  async 'idp show'(deps, _ctx, _v, pos) {
    const view = toView(await findIdentityProvider(deps, nameOf(pos)));
    return { json: view, text: describe(view) };
  },
  async 'idp rotate-token'(deps, ctx, _v, pos) {
    const rotated = await rotateScimToken(deps, ctx, nameOf(pos));
    return {
      json: rotated,
      text: `new SCIM token for ${rotated.name} (the previous one no longer works)${tokenText(deps, rotated.token)}`,
    };
  },
  async 'idp disable'(deps, ctx, _v, pos) {
    const view = await updateIdentityProvider(deps, ctx, nameOf(pos), { disabled: true });
    return {
      json: view,
      text: `disabled ${view.name}: its token is refused and it is not synced; its users stay as they are`,
    };
  },
  async 'idp enable'(deps, ctx, _v, pos) {
    const view = await updateIdentityProvider(deps, ctx, nameOf(pos), { disabled: false });
    return { json: view, text: `enabled ${view.name}` };
  },
  async 'idp delete'(deps, ctx, _v, pos) {
    const result = await deleteIdentityProvider(deps, ctx, nameOf(pos));
    return {
      json: result,
      text: `deleted ${result.name}: ${countOf(result.deactivatedUsers, 'active user')} deactivated; its users and groups are now managed through /v1`,
    };
  },
};
