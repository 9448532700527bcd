import { ROLES, USER_STATUSES } from '@support-desk/contracts/vocabulary';
import { type CommandSpec, IF_NOT_EXISTS } from '../command.js';
import { listCommand } from '../list-command.js';

const USER_ARG = [{ name: 'USER', description: 'the user: id (usr_…) or email', required: true }];

/** `deskctl users …` (what they run: run/users.ts). */
export const usersCommands: Record<string, CommandSpec> = {
  'users list': listCommand({
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
    noun: ['user', 'users'],
  }),
  'users show': {
    description: 'one user, with groups, identity provider and metadata',
    options: {},
    args: USER_ARG,
    examples: ['users show ada@example.com', 'users show usr_01J... --json'],
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
  },
  'users deactivate': {
    description:
      'deactivate a user: they can no longer log in, and their API keys and tokens are revoked for good',
    options: {},
    args: USER_ARG,
    examples: ['users deactivate ada@example.com --yes'],
    confirm: (_v, pos) => `${pos[0]} will be deactivated and their API keys and tokens revoked for good`,
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
  },
};
