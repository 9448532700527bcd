import type {
  GroupRef,
  ListPagination,
  UserDetail,
  UserListItem,
  UserSnapshot,
} from '@support-desk/contracts';
import type { UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/** Names of the given live groups, by id (deleted or unknown ids are left out). */
export const groupNames = (deps: Pick<Deps, 'groups'>, ids: Iterable<string>) => deps.groups.liveNames(ids);

export const groupRefs = (ids: string[], names: Map<string, string>): GroupRef[] =>
  ids.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! }));

export function toListItem(u: UserDoc, names: Map<string, string>): UserListItem {
  return {
    id: u._id,
    email: u.email,
    name: u.name,
    role: u.role,
    status: u.status,
    isVip: u.isVip ?? false,
    groups: groupRefs(u.groups ?? [], names),
    createdAt: iso(u.createdAt)!,
    lastLoginAt: iso(u.lastLoginAt),
  };
}

export function toDetail(u: UserDoc, names: Map<string, string>): UserDetail {
  return {
    ...toListItem(u, names),
    updatedAt: iso(u.updatedAt)!,
    identityProvider: u.identityProvider ?? 'local',
    metadata: u.metadata ?? {},
    deactivatedAt: iso(u.deactivatedAt),
    ...(u.externalId ? { externalId: u.externalId } : {}),
  };
}

export function toSnapshot(u: UserDoc, names: Map<string, string>): UserSnapshot {
  const { createdAt: _createdAt, lastLoginAt: _lastLoginAt, ...common } = toListItem(u, names);
  return { ...common, updatedAt: iso(u.updatedAt)! };
}

/**
 * The user as every event about it carries it (`snapshot`): as `GET /v1/users/:id` shows it, so
 * nothing a viewer could not read and no secret (`u` is the user as the write leaves it).
 */
export async function userEventSnapshot(deps: Pick<Deps, 'groups'>, u: UserDoc): Promise<UserDetail> {
  return toDetail(u, await groupNames(deps, u.groups ?? []));
}

/** List items for a page of users, resolving every group name in one query. */
export async function toListItems(deps: Pick<Deps, 'groups'>, users: UserDoc[]): Promise<UserListItem[]> {
  const names = await groupNames(
    deps,
    users.flatMap((u) => u.groups ?? []),
  );
  return users.map((u) => toListItem(u, names));
}

/** What identity tells other services about one user (RPC `getUser`). */
export async function userSnapshot(deps: Deps, id: string): Promise<UserSnapshot | null> {
  const user = await deps.users.findById(id);
  return user ? toSnapshot(user, await groupNames(deps, user.groups)) : null;
}

const PLURAL = new Intl.PluralRules('en');

/** "1 member", "3 members": a count with its noun in the right number (English plural rules). */
export const countOf = (n: number, one: string, several = `${one}s`) =>
  `${n} ${PLURAL.select(n) === 'one' ? one : several}`;

/**
 * The total of a page-mode list answer (page mode counts); should an older service answer without
 * it, what has been seen up to this page (a caller then shows no further page).
 */
export const pageTotal = (pagination: ListPagination, page: number, limit: number, shown: number) =>
  'total' in pagination && typeof pagination.total === 'number'
    ? pagination.total
    : (page - 1) * limit + shown;
