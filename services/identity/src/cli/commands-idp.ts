import { ROLES, type Role } from '@support-desk/contracts';
import type { GroupRoleRule, IdentityProviderKind } from '../store/index.js';
import {
  createIdentityProvider,
  deleteIdentityProvider,
  findIdentityProvider,
  IDENTITY_PROVIDER_KINDS,
  type IdentityProviderView,
  listIdentityProviders,
  rotateScimToken,
  toView,
  updateIdentityProvider,
} from '../use-cases/identity-providers.js';
import type { Deps } from '../use-cases/deps.js';
import { scimBaseUrl } from '../use-cases/scim/calls.js';
import { countOf } from '../use-cases/views.js';
import { required, UsageError } from './args.js';
import { type Command, oneOf, type Options, when } from './command.js';
import { listCommand, pageOf } from './list-command.js';
import { describeRun, LDAP_OPTIONS, ldapCommands, ldapSettingsFrom } from './commands-ldap.js';

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

/**
 * The options of `idp create` and `idp update`: shared, so the LDAP sync's settings (its own
 * flags, added beside these) reach both.
 */
export const IDP_SETTINGS_OPTIONS: Options = {
  'default-role': {
    type: 'string',
    value: ROLES.join('|'),
    description: 'role of a provisioned user no group rule matches (default viewer)',
  },
  'group-role': {
    type: 'string',
    multiple: true,
    value: 'GROUP=ROLE',
    description:
      "members of the group GROUP get ROLE: its external id (SCIM externalId, the LDAP entry's id), its grp_ id or (LDAP) its DN, never its display name",
  },
  ...LDAP_OPTIONS,
};

const NAME_ARG = [{ name: 'NAME', description: 'the identity provider', required: true }];

/** Identity provider connections (SCIM and LDAP): see the README's "Identity providers". */
export const idpCommands: Record<string, Command> = {
  'idp create': {
    description:
      'connect an identity provider: SCIM (pushed by the provider; prints the SCIM URL and its token, once) or LDAP (pulled)',
    options: {
      kind: {
        type: 'string',
        value: 'scim|ldap',
        description: 'how users arrive: SCIM pushes, LDAP is pulled',
      },
      ...IDP_SETTINGS_OPTIONS,
    },
    args: NAME_ARG,
    examples: [
      'idp create okta --kind scim --default-role viewer --group-role "00g1a2b3c4=agent"',
      'idp create corp --kind ldap --url ldap://ldap.example.com:389 --bind-dn cn=reader,dc=example,dc=com --password-env LDAP_PASSWORD --base-dn dc=example,dc=com',
    ],
    async run(deps, ctx, v, pos) {
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
  },
  'idp update': {
    description: 'change a connection: its roles, or its LDAP settings (only the flags given change)',
    options: { ...IDP_SETTINGS_OPTIONS },
    args: NAME_ARG,
    examples: ['idp update okta --default-role agent', 'idp update corp --interval 1h'],
    async run(deps, ctx, v, pos) {
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
  },
  'idp list': listCommand<IdentityProviderView>({
    description: 'list the identity provider connections',
    examples: ['idp list', 'idp list --json'],
    key: 'identityProviders',
    noun: ['identity provider', 'identity providers'],
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
  'idp show': {
    description: 'show one connection, its settings and its last sync',
    options: {},
    args: NAME_ARG,
    examples: ['idp show okta'],
    async run(deps, _ctx, _v, pos) {
      const view = toView(await findIdentityProvider(deps, nameOf(pos)));
      return { json: view, text: describe(view) };
    },
  },
  'idp rotate-token': {
    description: 'issue a new SCIM token (printed once); the previous one stops working at once',
    options: {},
    args: NAME_ARG,
    examples: ['idp rotate-token okta --yes'],
    confirm: (_v, pos) => `The SCIM token of ${pos[0]} will stop working at once`,
    async run(deps, ctx, _v, pos) {
      const rotated = await rotateScimToken(deps, ctx, nameOf(pos));
      return {
        json: rotated,
        text: `new SCIM token for ${rotated.name} (the previous one no longer works)${tokenText(deps, rotated.token)}`,
      };
    },
  },
  'idp disable': {
    description: 'refuse its token and stop syncing it; its users stay as they are',
    options: {},
    args: NAME_ARG,
    examples: ['idp disable okta'],
    async run(deps, ctx, _v, pos) {
      const view = await updateIdentityProvider(deps, ctx, nameOf(pos), { disabled: true });
      return {
        json: view,
        text: `disabled ${view.name}: its token is refused and it is not synced; its users stay as they are`,
      };
    },
  },
  'idp enable': {
    description: 'accept its token and sync it again',
    options: {},
    args: NAME_ARG,
    examples: ['idp enable okta'],
    async run(deps, ctx, _v, pos) {
      const view = await updateIdentityProvider(deps, ctx, nameOf(pos), { disabled: false });
      return { json: view, text: `enabled ${view.name}` };
    },
  },
  'idp delete': {
    description:
      'delete a connection: its active users are deactivated, its users and groups become managed through /v1',
    options: {},
    args: NAME_ARG,
    examples: ['idp delete okta --yes'],
    confirm: (_v, pos) => `Identity provider ${pos[0]} will be deleted and its active users deactivated`,
    async run(deps, ctx, _v, pos) {
      const result = await deleteIdentityProvider(deps, ctx, nameOf(pos));
      return {
        json: result,
        text: `deleted ${result.name}: ${countOf(result.deactivatedUsers, 'active user')} deactivated; its users and groups are now managed through /v1`,
      };
    },
  },
  ...ldapCommands,
};
