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
import {
  createUser,
  deactivateUser,
  type Deps,
  findUserByEmail,
  firstUserProblem,
  getUser,
  linkUserToProvider,
  listUsers,
  setPassword,
  updateUser,
} from '@support-desk/identity/admin';
import { firstSchemaProblem, notFound } from '@support-desk/platform/core';
import type { TSchema } from 'typebox';
import { readStdin, required, UsageError } from '../args.js';
import { ifNotExists, oneOf, type Run, when } from '../command.js';
import { usersCommands } from '../commands/users.js';
import { listRun } from './list.js';

export const idsFrom = (value: unknown): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** The first schema problem of what the flags built, as a usage error naming the flag. */
function checked<T>(schema: TSchema, value: T, flags: Record<string, string>): T {
  const first = firstSchemaProblem(schema, value);
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

const groupNames = (u: Pick<UserListItem, 'groups'>) => u.groups.map((g) => g.name).join(',');

export const runs: Record<string, Run> = {
  'users list': listRun<UserListItem>(usersCommands['users list'], {
    key: 'users',
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
  async 'users show'(deps, _ctx, _v, pos) {
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
  async 'users create'(deps, ctx, v) {
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
  async 'users update'(deps, ctx, v, pos) {
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
  async 'users deactivate'(deps, ctx, _v, pos) {
    const result = await deactivateUser(deps, ctx, await userIdOf(deps, pos[0]));
    return { json: result, text: `deactivated ${result.id}` };
  },
  async 'users link'(deps, ctx, v, pos) {
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
  async 'users set-password'(deps, ctx, v) {
    const email = required(v, 'email');
    if (!v['password-stdin']) throw new UsageError('--password-stdin is required');
    const result = await setPassword(deps, ctx, email, await readStdin());
    return { json: { ...result, passwordSet: true }, text: `password set for ${result.email}` };
  },
};
