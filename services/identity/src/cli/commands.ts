import { firstUserProblem } from '../use-cases/input-checks.js';
import { notFound } from '@support-desk/platform';
import { bootstrap } from '../use-cases/bootstrap.js';
import { CLI_ACTOR, cliContext, type Deps, type EventContext } from '../use-cases/deps.js';
import { getSettings, setGlobalAllowlist } from '../use-cases/settings.js';
import { findUserByEmail } from '../use-cases/user-lookups.js';
import { rotateDevSigningKey } from '../oauth/keys.js';
import { parseDuration, required, UsageError } from './args.js';
import { allowlistFrom, credentialCommands } from './commands-credentials.js';
import { deadLetterCommands } from './commands-dead-letters.js';
import { groupsCommands } from './commands-groups.js';
import { idpCommands } from './commands-idp.js';
import { usersCommands } from './commands-users.js';
import { webhookCommands } from './commands-webhooks.js';
import type { Command } from './command.js';

/** What `deskctl <group> --help` says a group of commands is for. */
export const GROUPS: Record<string, string> = {
  users: 'users: list, show, create, update, deactivate, set a password, link to an identity provider',
  groups: 'groups and their members',
  'api-keys': 'API keys: create (the value is shown once), list with last use, revoke',
  'oauth-clients': 'OAuth 2.0 clients of the authorization server: create, list, revoke',
  'oauth-keys': 'the OAuth token signing keys',
  settings: 'global settings',
  'settings ip-allowlist': 'the global IP allowlist of API keys',
  idp: 'identity provider connections (SCIM and LDAP)',
  'dead-letters': "messages a service's consumers could not take",
  webhooks:
    'webhook subscriptions (asked of the webhooks service): create, list, update, delete, secrets, pings, deliveries',
};

export const COMMANDS: Record<string, Command> = {
  ...usersCommands,
  ...groupsCommands,
  ...deadLetterCommands,
  ...idpCommands,
  ...credentialCommands,
  ...webhookCommands,
  'settings ip-allowlist set': {
    description: 'replace the global allowlist: API keys are refused from any other address',
    options: {},
    args: [{ name: 'CIDRS', description: 'addresses or ranges, comma-separated', required: true }],
    examples: ['settings ip-allowlist set 10.0.0.0/8,192.0.2.7'],
    async run(deps, ctx, _v, pos) {
      const list = allowlistFrom(pos[0]);
      if (list.length === 0) throw new UsageError('empty allowlist; use "settings ip-allowlist clear"');
      const s = await setGlobalAllowlist(deps, ctx, list);
      return { json: s, text: `global API-key allowlist: ${s.globalAllowlist.join(', ')}` };
    },
  },
  'settings ip-allowlist clear': {
    description: 'empty the global allowlist: API keys may be used from any address',
    options: {},
    examples: ['settings ip-allowlist clear --yes'],
    confirm: () => 'The global IP allowlist will be emptied: API keys will be accepted from any address',
    async run(deps, ctx) {
      const s = await setGlobalAllowlist(deps, ctx, []);
      return { json: s, text: 'global API-key allowlist cleared (no restriction)' };
    },
  },
  'settings ip-allowlist show': {
    description: 'print the global allowlist',
    options: {},
    examples: ['settings ip-allowlist show'],
    async run(deps) {
      const s = await getSettings(deps);
      return {
        json: s,
        text: s.globalAllowlist.length
          ? s.globalAllowlist.join('\n')
          : '(empty: API keys may be used from any address)',
      };
    },
  },
  'oauth-keys rotate': {
    description:
      'start signing tokens with a new key; the previous keys stay in the JWKS until tokens signed with them expire',
    options: {},
    examples: ['oauth-keys rotate'],
    async run(deps) {
      const result = await rotateDevSigningKey(deps.config, deps.clock());
      return {
        json: result,
        text: `new signing key ${result.kid}; previous keys stay in the JWKS until ${result.retainUntil}`,
      };
    },
  },
  bootstrap: {
    description: 'create the first admin and an admin API key (printed once)',
    options: {
      email: { type: 'string', value: 'EMAIL', description: "the admin's email" },
      name: { type: 'string', value: 'NAME', description: "the admin's display name" },
      'if-none': { type: 'boolean', description: 'do nothing (exit 0) when an admin exists already' },
      'expires-in': {
        type: 'string',
        value: 'DURATION',
        description: "the key's lifetime (30m, 1h, 2d…); without it the key never expires",
      },
    },
    examples: [
      'bootstrap --email admin@example.com --name Admin --if-none --json',
      'bootstrap --email admin@example.com --name Admin --if-none --expires-in 1h',
    ],
    async run(deps, ctx, v) {
      const email = required(v, 'email');
      const name = required(v, 'name');
      const first = firstUserProblem({ email, name, role: 'admin' });
      if (first) throw new UsageError(`--${first.field} ${first.message}`);
      const lifetime = typeof v['expires-in'] === 'string' ? parseDuration(v['expires-in']) : undefined;
      const result = await bootstrap(deps, ctx, {
        email,
        name,
        ifNone: v['if-none'] === true,
        ...(lifetime !== undefined ? { expiresInSeconds: lifetime } : {}),
      });
      if (result.skipped) return { json: { skipped: true }, text: 'an admin already exists; nothing to do' };
      const expiry = result.expiresAt
        ? `It expires at ${result.expiresAt}: create your own admin key with it before then.`
        : 'Store it now: it is shown only once.';
      return {
        json: result,
        text: `created admin ${result.user.email} (${result.user.id}) and API key ${result.keyId}\n\n  ${result.key}\n\n${expiry}`,
      };
    },
  },
};

/** The acting identity: `--as EMAIL` (an active admin) or the fixed deskctl actor. */
export async function actingContext(deps: Deps, asEmail: unknown): Promise<EventContext> {
  if (typeof asEmail !== 'string') return cliContext(CLI_ACTOR);
  const user = await findUserByEmail(deps, asEmail);
  if (!user) throw notFound(`User ${asEmail}`);
  if (user.role !== 'admin' || user.status !== 'active')
    throw new UsageError(`--as ${asEmail} is not an active admin`);
  return cliContext({ id: user._id, name: user.name, email: user.email, role: 'admin' });
}
