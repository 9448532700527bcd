import {
  addMember,
  countOf,
  createGroup,
  type Deps,
  getGroup,
  listGroups,
  removeMember,
} from '@support-desk/identity/admin';
import { notFound } from '@support-desk/platform/core';
import { required, UsageError } from '../args.js';
import { ifNotExists, type Run } from '../command.js';
import { groupsCommands } from '../commands/groups.js';
import { listRun, pageOf } from './list.js';
import { userIdOf } from './users.js';

type GroupSummary = Awaited<ReturnType<typeof listGroups>>['groups'][number];

/** A group named by id (`grp_…`) or by its name. */
async function groupIdOf(deps: Deps, idOrName: string): Promise<string> {
  if (/^grp_[0-9a-z]{26}$/.test(idOrName)) return idOrName;
  const group = await deps.groups.findLiveByName(idOrName);
  if (!group) throw notFound(`Group "${idOrName}"`);
  return group._id;
}

export const runs: Record<string, Run> = {
  async 'groups create'(deps, ctx, v) {
    const name = required(v, 'name');
    if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
    const description = typeof v.description === 'string' ? v.description : undefined;
    if (description && description.length > 1000)
      throw new UsageError('--description must be at most 1000 characters');
    if (ifNotExists(v)) {
      const existing = await deps.groups.findLiveByName(name);
      if (existing) {
        const group = await getGroup(deps, existing._id);
        return {
          json: { ...group, existed: true },
          text: `group ${group.id} "${group.name}" already exists`,
        };
      }
    }
    const group = await createGroup(deps, ctx, {
      name,
      ...(description !== undefined ? { description } : {}),
    });
    return { json: group, text: `created group ${group.id} "${group.name}"` };
  },
  'groups list': listRun<GroupSummary>(groupsCommands['groups list'], {
    key: 'groups',
    columns: ['id', 'name', 'members', 'description'],
    row: (g) => [g.id, g.name, String(g.memberCount), g.description],
    fetch: async (deps, _ctx, _v, _pos, _nc, request) => pageOf((await listGroups(deps)).groups, request),
  }),
  async 'groups add-member'(deps, ctx, _v, pos) {
    const group = await addMember(deps, ctx, await groupIdOf(deps, pos[0]), await userIdOf(deps, pos[1]));
    return {
      json: group,
      text: `${pos[1]} is a member of "${group.name}" (${countOf(group.memberCount, 'member')})`,
    };
  },
  async 'groups remove-member'(deps, ctx, _v, pos) {
    const group = await removeMember(deps, ctx, await groupIdOf(deps, pos[0]), await userIdOf(deps, pos[1]));
    return {
      json: group,
      text: `${pos[1]} is not a member of "${group.name}" (${countOf(group.memberCount, 'member')})`,
    };
  },
};
