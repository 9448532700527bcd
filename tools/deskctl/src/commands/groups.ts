import { type CommandSpec, IF_NOT_EXISTS } from '../command.js';
import { listCommand } from '../list-command.js';

const MEMBER_ARGS = [
  { name: 'GROUP', description: 'the group: id (grp_…) or name', required: true },
  { name: 'USER', description: 'the user: id (usr_…) or email', required: true },
];

/** `deskctl groups …` (what they run: run/groups.ts). */
export const groupsCommands: Record<string, CommandSpec> = {
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
  },
  'groups list': listCommand({
    description: 'list the groups with their member counts',
    examples: ['groups list', 'groups list --json'],
    noun: ['group', 'groups'],
  }),
  'groups add-member': {
    description: 'add a user to a group (nothing changes if they are in it already)',
    options: {},
    args: MEMBER_ARGS,
    examples: ['groups add-member "Tier 1" ada@example.com'],
  },
  'groups remove-member': {
    description: 'remove a user from a group (nothing changes if they are not in it)',
    options: {},
    args: MEMBER_ARGS,
    examples: ['groups remove-member "Tier 1" ada@example.com'],
  },
};
