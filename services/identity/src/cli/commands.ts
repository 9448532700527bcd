import { PLANS, type Plan } from '@support-desk/contracts';
import { firstUserProblem } from '../use-cases/input-checks.js';
import { notFound } from '@support-desk/platform';
import { createApiKey, listApiKeys, revokeApiKey } from '../use-cases/api-keys.js';
import { bootstrap } from '../use-cases/bootstrap.js';
import { CLI_ACTOR, cliContext, type Deps, type EventContext } from '../use-cases/deps.js';
import { parseAllowlist } from '../use-cases/ip-allowlist.js';
import { createOAuthClient } from '../use-cases/oauth-clients.js';
import { getSettings, setGlobalAllowlist } from '../use-cases/settings.js';
import { findUserByEmail } from '../use-cases/users.js';
import { rotateDevSigningKey } from '../oauth/keys.js';
import { parseDuration, positiveInt, required, UsageError } from './args.js';
import { deadLetterCommands } from './commands-dead-letters.js';
import { groupsCommands } from './commands-groups.js';
import { idpCommands } from './commands-idp.js';
import { usersCommands } from './commands-users.js';
import { type Command, ifNotExists, oneOf, type Options } from './command.js';

const limitsFrom = (values: Record<string, unknown>) => {
  const general = positiveInt(values['rate-limit'], 'rate-limit');
  const events = positiveInt(values['events-rate-limit'], 'events-rate-limit');
  return general === undefined && events === undefined ? undefined : { general, events };
};

const allowlistFrom = (value: string) => {
  try {
    return parseAllowlist(value);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
};

/** The limits flags of an Enterprise key or client. */
const LIMIT_OPTIONS: Options = {
  'rate-limit': { type: 'string', value: 'N', description: 'calls a minute (Enterprise plan only)' },
  'events-rate-limit': {
    type: 'string',
    value: 'N',
    description: 'events API calls a minute (Enterprise plan only)',
  },
};
const PLAN_OPTION: Options = {
  plan: { type: 'string', value: PLANS.join('|'), description: 'rate-limit plan (default standard)' },
};

/** What `deskctl <group> --help` says a group of commands is for. */
export const GROUPS: Record<string, string> = {
  users: 'users: list, show, create, update, deactivate, set a password',
  groups: 'groups and their members',
  'api-keys': 'API keys: create (the value is shown once), list with last use, revoke',
  'oauth-clients': 'OAuth 2.0 clients of the authorization server',
  'oauth-keys': 'the OAuth token signing keys',
  settings: 'global settings',
  'settings ip-allowlist': 'the global IP allowlist of API keys',
  idp: 'identity provider connections (SCIM and LDAP)',
  'dead-letters': "messages a service's consumers could not take",
};

const when = (iso: string | null | undefined) => (iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');

export const COMMANDS: Record<string, Command> = {
  ...usersCommands,
  ...groupsCommands,
  ...deadLetterCommands,
  ...idpCommands,
  'api-keys create': {
    description: 'create an API key for a user; its value is printed once',
    options: {
      owner: { type: 'string', value: 'EMAIL', description: 'the user the key acts as' },
      name: { type: 'string', value: 'NAME', description: 'what the key is for (shown in lists)' },
      scopes: {
        type: 'string',
        value: 'SCOPE,...',
        description: "what it may do (within the owner's role), e.g. requests:read,requests:write or admin",
      },
      ...PLAN_OPTION,
      ...LIMIT_OPTIONS,
      'allow-ip': { type: 'string', value: 'CIDR,...', description: 'only from these addresses' },
      'expires-in': {
        type: 'string',
        value: '30d|12h|90m|2w',
        description: 'expire after this long (default never)',
      },
      'if-not-exists': {
        type: 'boolean',
        description:
          'when the owner has an unrevoked key of this name, show it (without its value) and create none',
      },
    },
    examples: [
      'api-keys create --owner ada@example.com --name "Ada\'s laptop" --scopes requests:read,requests:write --expires-in 90d',
      'api-keys create --owner ops@example.com --name ci --scopes admin --plan enterprise --rate-limit 600 --json',
    ],
    async run(deps, ctx, v) {
      const plan = oneOf(v.plan, PLANS, 'plan') as Plan | undefined;
      const limits = limitsFrom(v);
      if (limits && plan !== 'enterprise')
        throw new UsageError('--rate-limit/--events-rate-limit need --plan enterprise');
      if (ifNotExists(v)) {
        const existing = (await listApiKeys(deps, required(v, 'owner'))).find(
          (k) => k.name === required(v, 'name') && !k.revokedAt,
        );
        if (existing)
          return {
            json: { ...existing, existed: true },
            text: `API key ${existing.id} "${existing.name}" of ${existing.owner.email} already exists (its value is not shown again)`,
          };
      }
      const key = await createApiKey(deps, ctx, {
        ownerEmail: required(v, 'owner'),
        name: required(v, 'name'),
        scopes: required(v, 'scopes')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        ...(plan ? { plan } : {}),
        ...(limits ? { limits } : {}),
        allowlist: typeof v['allow-ip'] === 'string' ? allowlistFrom(v['allow-ip']) : [],
        ...(typeof v['expires-in'] === 'string' ? { expiresInSeconds: parseDuration(v['expires-in']) } : {}),
      });
      return {
        json: key,
        text: `created API key ${key.id} for ${key.owner.email}\n\n  ${key.key}\n\nStore it now: it is shown only once.`,
      };
    },
  },
  'api-keys list': {
    description:
      'list API keys (newest first) with owner, scopes, plan, expiry and last use; never their values',
    options: {
      owner: { type: 'string', value: 'EMAIL', description: "only this user's keys" },
      active: { type: 'boolean', description: 'only keys that work: not revoked, not expired' },
    },
    examples: ['api-keys list', 'api-keys list --owner ada@example.com --active --json'],
    async run(deps, _ctx, v) {
      const listed = await listApiKeys(deps, typeof v.owner === 'string' ? v.owner : undefined);
      const now = new Date().toISOString();
      const statusOf = (k: (typeof listed)[number]) =>
        k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active';
      const keys = v.active === true ? listed.filter((k) => statusOf(k) === 'active') : listed;
      return {
        json: { keys },
        text: 'no API keys',
        table: {
          columns: ['id', 'name', 'owner', 'scopes', 'plan', 'created', 'expires', 'last used', 'status'],
          rows: keys.map((k) => [
            k.id,
            k.name,
            k.owner.email,
            k.scopes.join(','),
            k.plan,
            when(k.createdAt),
            when(k.expiresAt),
            k.lastUsedAt ? when(k.lastUsedAt) : 'never',
            statusOf(k),
          ]),
        },
      };
    },
  },
  'api-keys revoke': {
    description: 'revoke an API key: refused at once by every gateway, for good',
    options: {},
    args: [{ name: 'ID', description: 'the key id (key_…)', required: true }],
    examples: ['api-keys revoke key_01J... --yes'],
    confirm: (_v, pos) => `API key ${pos[0]} will be revoked for good`,
    async run(deps, ctx, _v, pos) {
      const id = pos[0];
      const result = await revokeApiKey(deps, ctx, id);
      return { json: result, text: result.alreadyRevoked ? `${id} was already revoked` : `revoked ${id}` };
    },
  },
  'oauth-clients create': {
    description: "register an OAuth 2.0 client; a confidential client's secret is printed once",
    options: {
      name: { type: 'string', value: 'NAME', description: 'shown to users on the consent page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        value: 'URI',
        description: 'an exact redirect URI (https, or http on a loopback host)',
      },
      public: { type: 'boolean', description: 'a public client (no secret; PKCE S256 required)' },
      ...PLAN_OPTION,
      ...LIMIT_OPTIONS,
    },
    examples: [
      'oauth-clients create --name "My app" --redirect-uri https://app.example.com/callback',
      'oauth-clients create --name CLI --redirect-uri http://127.0.0.1:8976/cb --public --json',
    ],
    async run(deps, ctx, v) {
      const uris = (v['redirect-uri'] as string[] | undefined) ?? [];
      if (uris.length === 0) throw new UsageError('--redirect-uri is required');
      const plan = oneOf(v.plan, PLANS, 'plan') as Plan | undefined;
      const limits = limitsFrom(v);
      if (limits && plan !== 'enterprise')
        throw new UsageError('--rate-limit/--events-rate-limit need --plan enterprise');
      const client = await createOAuthClient(deps, ctx, {
        name: required(v, 'name'),
        redirectUris: uris,
        isPublic: v.public === true,
        ...(plan ? { plan } : {}),
        ...(limits ? { limits } : {}),
      });
      const secretLine = client.client_secret
        ? `\n  client_secret: ${client.client_secret}\n\nStore the secret now: it is shown only once.`
        : '\n  (public client: no secret; PKCE S256 required)';
      return {
        json: client,
        text: `created OAuth client "${client.name}"\n  client_id: ${client.client_id}${secretLine}`,
      };
    },
  },
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
    },
    examples: ['bootstrap --email admin@example.com --name Admin --if-none --json'],
    async run(deps, ctx, v) {
      const email = required(v, 'email');
      const name = required(v, 'name');
      const first = firstUserProblem({ email, name, role: 'admin' });
      if (first) throw new UsageError(`--${first.field} ${first.message}`);
      const result = await bootstrap(deps, ctx, { email, name, ifNone: v['if-none'] === true });
      if (result.skipped) return { json: { skipped: true }, text: 'an admin already exists; nothing to do' };
      return {
        json: result,
        text: `created admin ${result.user.email} (${result.user.id}) and API key ${result.keyId}\n\n  ${result.key}\n\nStore it now: it is shown only once.`,
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
