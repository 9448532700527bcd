import { PLANS, type Plan } from '@support-desk/contracts';
import { type ApiKeyView, createApiKey, listApiKeys, revokeApiKey } from '../use-cases/api-keys.js';
import { parseAllowlist } from '../use-cases/ip-allowlist.js';
import { countOf } from '../use-cases/views.js';
import {
  listOAuthClients,
  type OAuthClientView,
  revokeOAuthClient,
} from '../use-cases/oauth-client-admin.js';
import { createOAuthClient } from '../use-cases/oauth-clients.js';
import { parseDuration, positiveInt, required, UsageError } from './args.js';
import { type Command, ifNotExists, oneOf, type Options, when } from './command.js';
import { listCommand } from './list-command.js';

const limitsFrom = (values: Record<string, unknown>) => {
  const general = positiveInt(values['rate-limit'], 'rate-limit');
  const events = positiveInt(values['events-rate-limit'], 'events-rate-limit');
  return general === undefined && events === undefined ? undefined : { general, events };
};

export const allowlistFrom = (value: string) => {
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

/** API keys and OAuth clients: the credentials an administrator issues and revokes. */
export const credentialCommands: Record<string, Command> = {
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
        const { keys } = await listApiKeys(deps, {
          ownerEmail: required(v, 'owner'),
          status: 'active',
          page: 1,
          limit: 10_000,
        });
        const existing = keys.find((k) => k.name === required(v, 'name'));
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
  'api-keys list': listCommand<ApiKeyView>({
    description:
      'list API keys (newest first) with owner, scopes, plan, expiry and last use; never their values',
    options: {
      owner: { type: 'string', value: 'EMAIL', description: "only this user's keys" },
      active: { type: 'boolean', description: 'only keys that work: not revoked, not expired' },
    },
    examples: [
      'api-keys list',
      'api-keys list --owner ada@example.com --active --json',
      'api-keys list --all',
    ],
    key: 'keys',
    noun: ['API key', 'API keys'],
    columns: ['id', 'name', 'owner', 'scopes', 'plan', 'created', 'expires', 'last used', 'status'],
    row: (k) => [
      k.id,
      k.name,
      k.owner.email,
      k.scopes.join(','),
      k.plan,
      when(k.createdAt),
      when(k.expiresAt),
      k.lastUsedAt ? when(k.lastUsedAt) : 'never',
      k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= new Date().toISOString() ? 'expired' : 'active',
    ],
    async fetch(deps, _ctx, v, _pos, _nc, { page, limit }) {
      const { keys, total } = await listApiKeys(deps, {
        ...(typeof v.owner === 'string' ? { ownerEmail: v.owner } : {}),
        status: v.active === true ? 'active' : 'all',
        page,
        limit,
      });
      return { items: keys, total };
    },
  }),
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
      'if-not-exists': {
        type: 'boolean',
        description:
          'when an unrevoked client of this name exists, show it (without its secret) and create none',
      },
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
      if (ifNotExists(v)) {
        const name = required(v, 'name').trim();
        const { clients } = await listOAuthClients(deps, { status: 'active', page: 1, limit: 10_000 });
        const existing = clients.find((c) => c.name === name);
        if (existing)
          return {
            json: { ...existing, existed: true },
            text: `OAuth client ${existing.client_id} "${existing.name}" already exists (its secret is not shown again)`,
          };
      }
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
  'oauth-clients list': listCommand<OAuthClientView>({
    description: 'list the OAuth clients (newest first); never their secrets',
    options: { active: { type: 'boolean', description: 'only clients that are not revoked' } },
    examples: ['oauth-clients list', 'oauth-clients list --active --json'],
    key: 'clients',
    noun: ['OAuth client', 'OAuth clients'],
    columns: ['client id', 'name', 'type', 'plan', 'created', 'status', 'redirect uris'],
    row: (c) => [
      c.client_id,
      c.name,
      c.public ? 'public' : 'confidential',
      c.plan,
      when(c.createdAt),
      c.revokedAt ? 'revoked' : 'active',
      c.redirect_uris.join(' '),
    ],
    async fetch(deps, _ctx, v, _pos, _nc, { page, limit }) {
      const status = v.active === true ? 'active' : 'all';
      const { clients, total } = await listOAuthClients(deps, { status, page, limit });
      return { items: clients, total };
    },
  }),
  'oauth-clients revoke': {
    description:
      'revoke an OAuth client for good: refused at /oauth/authorize and /oauth/token, its grants and tokens revoked',
    options: {},
    args: [{ name: 'CLIENT_ID', description: 'the client (cli_…)', required: true }],
    examples: ['oauth-clients revoke cli_01J... --yes'],
    confirm: (_v, pos) => `OAuth client ${pos[0]} will be revoked for good, with every token it holds`,
    async run(deps, ctx, _v, pos) {
      const r = await revokeOAuthClient(deps, ctx, pos[0]);
      return {
        json: r,
        text: r.alreadyRevoked
          ? `${r.client_id} was already revoked`
          : `revoked ${r.client_id} and ${countOf(r.grantsRevoked, 'grant')}`,
      };
    },
  },
};
