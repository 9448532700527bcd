import { notFound } from '@support-desk/platform';
import type { Deps } from '../use-cases/deps.js';
import { addMember, createGroup, getGroup, listGroups, removeMember } from '../use-cases/groups.js';
import { countOf } from '../use-cases/views.js';
import { required, UsageError } from './args.js';
import { type Command, IF_NOT_EXISTS, ifNotExists } from './command.js';
import { listCommand, pageOf } from './list-command.js';
import { userIdOf } from './commands-users.js';

type GroupSummary = Awaited<ReturnType<typeof listGroups>>['groups'][number];

/** A group named by id (`grp_…`) or by its name. */
async function groupIdOf(deps: Deps, idOrName: string): Promise<string> {
  if (/^grp_[0-9a-z]{26}$/.test(idOrName)) return idOrName;
  const group = await deps.groups.findLiveByName(idOrName);
  if (!group) throw notFound(`Group "${idOrName}"`);
  return group._id;
}

const MEMBER_ARGS = [
  { name: 'GROUP', description: 'the group: id (grp_…) or name', required: true },
  { name: 'USER', description: 'the user: id (usr_…) or email', required: true },
];

export const groupsCommands: Record<string, Command> = {
  'groups create': {
    description: 'create a group',
    options: {
      name: { type: 'string', value: 'NAME', description: 'its name (unique, at most 100 characters)' },
      description: { type: 'string', value: 'TEXT', description: 'what it is for (at most 1000 characters)' },
      ...IF_NOT_EXISTS,
    },
    examples: [
      'groups create --name "Tier 1" --description "First line"',
      'groups create --name Billing --if-not-exists',
    ],
    async run(deps, ctx, v) {
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
  },
  'groups list': listCommand<GroupSummary>({
    description: 'list the groups with their member counts',
    examples: ['groups list', 'groups list --json'],
    key: 'groups',
    noun: ['group', 'groups'],
    columns: ['id', 'name', 'members', 'description'],
    row: (g) => [g.id, g.name, String(g.memberCount), g.description],
    fetch: async (deps, _ctx, _v, _pos, _nc, request) => pageOf((await listGroups(deps)).groups, request),
  }),
  'groups add-member': {
    description: 'add a user to a group (nothing changes if they are in it already)',
    options: {},
    args: MEMBER_ARGS,
    examples: ['groups add-member "Tier 1" ada@example.com'],
    async run(deps, ctx, _v, pos) {
      const group = await addMember(deps, ctx, await groupIdOf(deps, pos[0]), await userIdOf(deps, pos[1]));
      return {
        json: group,
        text: `${pos[1]} is a member of "${group.name}" (${countOf(group.memberCount, 'member')})`,
      };
    },
  },
  'groups remove-member': {
    description: 'remove a user from a group (nothing changes if they are not in it)',
    options: {},
    args: MEMBER_ARGS,
    examples: ['groups remove-member "Tier 1" ada@example.com'],
    async run(deps, ctx, _v, pos) {
      const group = await removeMember(
        deps,
        ctx,
        await groupIdOf(deps, pos[0]),
        await userIdOf(deps, pos[1]),
      );
      return {
        json: group,
        text: `${pos[1]} is not a member of "${group.name}" (${countOf(group.memberCount, 'member')})`,
      };
    },
  },
};
