import { PLANS } from '@support-desk/contracts/vocabulary';
import type { CommandSpec, Options } from '../command.js';
import { listCommand } from '../list-command.js';

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

/** API keys and OAuth clients: the credentials an administrator issues and revokes (run/credentials.ts). */
export const credentialCommands: Record<string, CommandSpec> = {
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
  },
  'api-keys list': listCommand({
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
    noun: ['API key', 'API keys'],
  }),
  'api-keys revoke': {
    description: 'revoke an API key: refused at once by every gateway, for good',
    options: {},
    args: [{ name: 'ID', description: 'the key id (key_…)', required: true }],
    examples: ['api-keys revoke key_01J... --yes'],
    confirm: (_v, pos) => `API key ${pos[0]} will be revoked for good`,
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
  },
  'oauth-clients list': listCommand({
    description: 'list the OAuth clients (newest first); never their secrets',
    options: { active: { type: 'boolean', description: 'only clients that are not revoked' } },
    examples: ['oauth-clients list', 'oauth-clients list --active --json'],
    noun: ['OAuth client', 'OAuth clients'],
  }),
  'oauth-clients revoke': {
    description:
      'revoke an OAuth client for good: refused at /oauth/authorize and /oauth/token, its grants and tokens revoked',
    options: {},
    args: [{ name: 'CLIENT_ID', description: 'the client (cli_…)', required: true }],
    examples: ['oauth-clients revoke cli_01J... --yes'],
    confirm: (_v, pos) => `OAuth client ${pos[0]} will be revoked for good, with every token it holds`,
  },
};
