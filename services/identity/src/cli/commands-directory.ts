import { ROLES, type Role } from '@support-desk/contracts';
import { firstUserProblem } from '../use-cases/input-checks.js';
import { createGroup, getGroup, listGroups } from '../use-cases/groups.js';
import { createUser, findUserByEmail, getUser, setPassword } from '../use-cases/users.js';
import { readStdin, required, UsageError } from './args.js';
import { type Command, oneOf } from './command.js';

const idsFrom = (value: unknown): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** Users and groups: what an operator (or a provisioning script) creates from the command line. */
export const directoryCommands: Record<string, Command> = {
  'users create': {
    usage:
      'users create --email E --name N --role admin|agent|viewer [--vip] [--groups ID,...] [--password-stdin] [--if-missing]',
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      vip: { type: 'boolean' },
      groups: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'if-missing': { type: 'boolean' },
    },
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
      if (v['if-missing'] === true) {
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
  'users set-password': {
    usage: 'users set-password --email E --password-stdin',
    options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(deps, ctx, v) {
      const email = required(v, 'email');
      if (!v['password-stdin']) throw new UsageError('--password-stdin is required');
      const result = await setPassword(deps, ctx, email, await readStdin());
      return { json: { ...result, passwordSet: true }, text: `password set for ${result.email}` };
    },
  },
  'groups create': {
    usage: 'groups create --name N [--description D] [--if-missing]',
    options: { name: { type: 'string' }, description: { type: 'string' }, 'if-missing': { type: 'boolean' } },
    async run(deps, ctx, v) {
      const name = required(v, 'name');
      if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
      const description = typeof v.description === 'string' ? v.description : undefined;
      if (description && description.length > 1000)
        throw new UsageError('--description must be at most 1000 characters');
      if (v['if-missing'] === true) {
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
  'groups list': {
    usage: 'groups list',
    options: {},
    async run(deps) {
      const { groups } = await listGroups(deps);
      return {
        json: { groups },
        text: groups.map((g) => `${g.id}  ${g.name} (${g.memberCount} members)`).join('\n') || 'no groups',
      };
    },
  },
};
