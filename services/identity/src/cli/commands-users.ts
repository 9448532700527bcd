import { Value } from '@sinclair/typebox/value';
import {
  ROLES,
  type Role,
  type UpdateUserBody,
  UpdateUserBody as UpdateUserBodySchema,
  type UserListItem,
  type UserListQuery,
  UserListQuery as UserListQuerySchema,
  USER_STATUSES,
} from '@support-desk/contracts';
import { notFound } from '@support-desk/platform';
import type { Deps } from '../use-cases/deps.js';
import { linkUserToProvider } from '../use-cases/provider-links.js';
import { findUserByEmail } from '../use-cases/user-lookups.js';
import { firstUserProblem } from '../use-cases/input-checks.js';
import {
  createUser,
  deactivateUser,
  getUser,
  listUsers,
  setPassword,
  updateUser,
} from '../use-cases/users.js';
import { readStdin, required, UsageError } from './args.js';
import { type Command, IF_NOT_EXISTS, ifNotExists, oneOf, when } from './command.js';
import { listCommand } from './list-command.js';

export const idsFrom = (value: unknown): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** The first schema problem of what the flags built, as a usage error naming the flag. */
function checked<T>(schema: Parameters<typeof Value.Errors>[0], value: T, flags: Record<string, string>): T {
  const first = Value.Errors(schema, value).First();
  if (!first) return value;
  const field = first.path.split('/')[1] ?? '';
  throw new UsageError(`${flags[field] ?? (field || 'the input')}: ${first.message.toLowerCase()}`);
}

/** `--role admin,agent`: every item one of `allowed`. */
function enumList(value: unknown, allowed: readonly string[], flag: string) {
  for (const item of idsFrom(value)) oneOf(item, allowed, flag);
}

/** A user named by id (`user_…`) or by email. */
export async function userIdOf(deps: Deps, idOrEmail: string): Promise<string> {
  if (!idOrEmail.includes('@')) return idOrEmail;
  const user = await findUserByEmail(deps, idOrEmail);
  if (!user) throw notFound(`User ${idOrEmail}`);
  return user._id;
}

const USER_ARG = [{ name: 'USER', description: 'the user: id (usr_…) or email', required: true }];
const groupNames = (u: Pick<UserListItem, 'groups'>) => u.groups.map((g) => g.name).join(',');
export const usersCommands: Record<string, Command> = {
  'users list': listCommand<UserListItem>({
    description: 'list users (newest first), with filters',
    options: {
      role: { type: 'string', value: 'ROLE,...', description: `only these roles (${ROLES.join(', ')})` },
      status: {
        type: 'string',
        value: 'STATUS,...',
        description: `only these statuses (${USER_STATUSES.join(', ')})`,
      },
      group: { type: 'string', value: 'GROUP_ID', description: 'only members of this group' },
      vip: { type: 'boolean', description: 'only VIP users' },
      search: { type: 'string', value: 'TEXT', description: 'name or email contains TEXT' },
    },
    examples: [
      'users list',
      'users list --role admin,agent --status active',
      'users list --search ada --json',
      'users list --all',
    ],
    key: 'users',
    noun: ['user', 'users'],
    columns: ['id', 'email', 'name', 'role', 'status', 'vip', 'groups', 'last login'],
    row: (u) => [
      u.id,
      u.email,
      u.name,
      u.role,
      u.status,
      u.isVip ? 'yes' : '',
      groupNames(u),
      when(u.lastLoginAt),
    ],
    async fetch(deps, _ctx, v, _pos, _nc, { limit, page }) {
      enumList(v.role, ROLES, 'role');
      enumList(v.status, USER_STATUSES, 'status');
      const query: UserListQuery = checked(
        UserListQuerySchema,
        {
          ...(typeof v.role === 'string' ? { role: v.role } : {}),
          ...(typeof v.status === 'string' ? { status: v.status } : {}),
          ...(typeof v.group === 'string' ? { groupId: v.group } : {}),
          ...(v.vip === true ? { isVip: true } : {}),
          ...(typeof v.search === 'string' ? { search: v.search } : {}),
          limit,
          page,
        },
        { role: '--role', status: '--status', groupId: '--group', search: '--search' },
      );
      const { users, pagination } = await listUsers(deps, query);
      const total = 'total' in pagination ? pagination.total : null;
      return { items: users, total: total ?? users.length };
    },
  }),
  'users show': {
    description: 'one user, with groups, identity provider and metadata',
    options: {},
    args: USER_ARG,
    examples: ['users show ada@example.com', 'users show usr_01J... --json'],
    async run(deps, _ctx, _v, pos) {
      const user = await getUser(deps, await userIdOf(deps, pos[0]));
      const text = [
        `${user.id}  ${user.email}  ${user.name}`,
        `role: ${user.role}  status: ${user.status}${user.isVip ? '  VIP' : ''}`,
        `groups: ${groupNames(user) || '-'}`,
        `identity provider: ${user.identityProvider}`,
        `created: ${when(user.createdAt)}  last login: ${when(user.lastLoginAt)}`,
        ...Object.entries(user.metadata).map(([k, val]) => `metadata ${k}: ${val}`),
      ].join('\n');
      return { json: user, text };
    },
  },
  'users create': {
    description: 'create a user (an invitation: with --password-stdin they can log in with a password)',
    options: {
      email: { type: 'string', value: 'EMAIL', description: 'their email (unique, case-insensitive)' },
      name: { type: 'string', value: 'NAME', description: 'their display name' },
      role: { type: 'string', value: ROLES.join('|'), description: 'what they may do' },
      vip: { type: 'boolean', description: 'a VIP requester (their requests are prioritised)' },
      groups: { type: 'string', value: 'GROUP_ID,...', description: 'the groups they belong to' },
      'password-stdin': { type: 'boolean', description: 'read a password for them from standard input' },
      ...IF_NOT_EXISTS,
    },
    examples: [
      'users create --email ada@example.com --name "Ada Lovelace" --role agent',
      'users create --email ada@example.com --name "Ada Lovelace" --role agent --if-not-exists --json',
    ],
    async run(deps, ctx, v) {
      const body = {
        email: required(v, 'email'),
        name: required(v, 'name'),
        role: oneOf(required(v, 'role'), ROLES, 'role') as Role,
        isVip: v.vip === true,
        groups: idsFrom(v.groups),
      };
      const first = firstUserProblem(body);
      if (first) throw new UsageError(`--${first.field} ${first.message}`);
      if (ifNotExists(v)) {
        // Idempotent provisioning: an existing account is reported as it is, never changed.
        const existing = await findUserByEmail(deps, body.email);
        if (existing) {
          const user = await getUser(deps, existing._id);
          return { json: { ...user, existed: true }, text: `user ${user.id} <${user.email}> already exists` };
        }
      }
      const password = v['password-stdin'] ? await readStdin() : undefined;
      const user = await createUser(deps, ctx, { ...body, ...(password !== undefined ? { password } : {}) });
      return { json: user, text: `created user ${user.id} <${user.email}> (${user.role})` };
    },
  },
  'users update': {
    description: 'change a user: only the flags given change (the same checks as PATCH /v1/users/:id)',
    options: {
      name: { type: 'string', value: 'NAME', description: 'new display name' },
      role: {
        type: 'string',
        value: ROLES.join('|'),
        description: 'new role (the last active admin keeps theirs)',
      },
      vip: { type: 'string', value: 'true|false', description: 'VIP or not' },
      groups: { type: 'string', value: 'GROUP_ID,...', description: 'replace their groups ("" for none)' },
      status: {
        type: 'string',
        value: USER_STATUSES.join('|'),
        description: 'active, or inactive (revokes their credentials)',
      },
    },
    args: USER_ARG,
    examples: [
      'users update ada@example.com --role admin',
      'users update usr_01J... --vip true --groups grp_01J...',
    ],
    async run(deps, ctx, v, pos) {
      if (v.vip !== undefined && v.vip !== 'true' && v.vip !== 'false')
        throw new UsageError('--vip must be true or false');
      const given = ['name', 'role', 'vip', 'groups', 'status'].filter((f) => v[f] !== undefined);
      if (given.length === 0)
        throw new UsageError('nothing to change: give --name, --role, --vip, --groups or --status');
      const body: UpdateUserBody = checked(
        UpdateUserBodySchema,
        {
          ...(typeof v.name === 'string' ? { name: v.name } : {}),
          ...(typeof v.role === 'string' ? { role: oneOf(v.role, ROLES, 'role') } : {}),
          ...(v.vip !== undefined ? { isVip: v.vip === 'true' } : {}),
          ...(typeof v.groups === 'string' ? { groups: idsFrom(v.groups) } : {}),
          ...(typeof v.status === 'string' ? { status: oneOf(v.status, USER_STATUSES, 'status') } : {}),
        },
        { name: '--name', groups: '--groups' },
      );
      const updated = await updateUser(deps, ctx, await userIdOf(deps, pos[0]), body);
      const changed = Object.keys(updated).filter((k) => k !== 'id' && k !== 'updatedAt');
      return {
        json: updated,
        text: changed.length ? `updated ${updated.id}: ${changed.join(', ')}` : `${updated.id} unchanged`,
      };
    },
  },
  'users deactivate': {
    description:
      'deactivate a user: they can no longer log in, and their API keys and tokens are revoked for good',
    options: {},
    args: USER_ARG,
    examples: ['users deactivate ada@example.com --yes'],
    confirm: (_v, pos) => `${pos[0]} will be deactivated and their API keys and tokens revoked for good`,
    async run(deps, ctx, _v, pos) {
      const result = await deactivateUser(deps, ctx, await userIdOf(deps, pos[0]));
      return { json: result, text: `deactivated ${result.id}` };
    },
  },
  'users link': {
    description:
      'link an existing user to an identity provider: its SCIM calls (or syncs) for that external id then manage them',
    options: {
      idp: { type: 'string', value: 'NAME', description: 'the identity provider connection (see idp list)' },
      'external-id': {
        type: 'string',
        value: 'ID',
        description: "the provider's id of the user (SCIM externalId, e.g. Okta's 00u…, Entra's object id)",
      },
    },
    args: USER_ARG,
    examples: [
      'users link ada@example.com --idp okta --external-id 00u1abcd',
      'users link usr_01J... --idp entra --external-id 9f6c… --json',
    ],
    async run(deps, ctx, v, pos) {
      const { user, linked } = await linkUserToProvider(deps, ctx, {
        userId: await userIdOf(deps, pos[0]),
        provider: required(v, 'idp'),
        externalId: required(v, 'external-id'),
      });
      const who = `${user.email} (${user.id})`;
      return {
        json: { ...user, linked },
        text: linked
          ? `linked ${who} to ${user.identityProvider} as ${user.externalId}: that provider now manages the user (password sign-in ends)`
          : `${who} is already linked to ${user.identityProvider} as ${user.externalId}`,
      };
    },
  },
  'users set-password': {
    description: 'set a user’s password (read from standard input, never from the command line)',
    options: {
      email: { type: 'string', value: 'EMAIL', description: 'the user' },
      'password-stdin': { type: 'boolean', description: 'read the password from standard input (required)' },
    },
    examples: [
      'printf "%s\\n" "$PASSWORD" | deskctl users set-password --email ada@example.com --password-stdin',
    ],
    async run(deps, ctx, v) {
      const email = required(v, 'email');
      if (!v['password-stdin']) throw new UsageError('--password-stdin is required');
      const result = await setPassword(deps, ctx, email, await readStdin());
      return { json: { ...result, passwordSet: true }, text: `password set for ${result.email}` };
    },
  },
};
