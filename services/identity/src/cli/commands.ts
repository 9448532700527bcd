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
import { parse, parseDuration, positiveInt, required, UsageError } from './args.js';
import { deadLetterCommands } from './commands-dead-letters.js';
import { directoryCommands } from './commands-directory.js';
import { idpCommands } from './commands-idp.js';
import { type Command, oneOf } from './command.js';

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

export const COMMANDS: Record<string, Command> = {
  ...directoryCommands,
  ...deadLetterCommands,
  ...idpCommands,
  'api-keys create': {
    usage:
      'api-keys create --owner EMAIL --name N --scopes a,b [--plan standard|professional|enterprise] [--rate-limit N] [--events-rate-limit N] [--allow-ip CIDR,...] [--expires-in 30d]',
    options: {
      owner: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      plan: { type: 'string' },
      'rate-limit': { type: 'string' },
      'events-rate-limit': { type: 'string' },
      'allow-ip': { type: 'string' },
      'expires-in': { type: 'string' },
    },
    async run(deps, ctx, v) {
      const plan = oneOf(v.plan, PLANS, 'plan') as Plan | undefined;
      const limits = limitsFrom(v);
      if (limits && plan !== 'enterprise')
        throw new UsageError('--rate-limit/--events-rate-limit need --plan enterprise');
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
    usage: 'api-keys list [--owner EMAIL]',
    options: { owner: { type: 'string' } },
    async run(deps, _ctx, v) {
      const keys = await listApiKeys(deps, typeof v.owner === 'string' ? v.owner : undefined);
      const lines = keys.map(
        (k) =>
          `${k.id}  ${k.name}  owner=${k.owner.email}  scopes=${k.scopes.join(',')}  plan=${k.plan}` +
          `${k.revokedAt ? '  REVOKED' : ''}${k.expiresAt ? `  expires=${k.expiresAt}` : ''}`,
      );
      return { json: { keys }, text: lines.length ? lines.join('\n') : 'no API keys' };
    },
  },
  'api-keys revoke': {
    usage: 'api-keys revoke ID',
    options: {},
    positionals: 1,
    async run(deps, ctx, _v, pos) {
      const id = pos[0];
      if (!id) throw new UsageError('the key id is required');
      const result = await revokeApiKey(deps, ctx, id);
      return { json: result, text: result.alreadyRevoked ? `${id} was already revoked` : `revoked ${id}` };
    },
  },
  'oauth-clients create': {
    usage:
      'oauth-clients create --name N --redirect-uri URI [--redirect-uri URI2 ...] [--public] [--plan P] [--rate-limit N] [--events-rate-limit N]',
    options: {
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      public: { type: 'boolean' },
      plan: { type: 'string' },
      'rate-limit': { type: 'string' },
      'events-rate-limit': { type: 'string' },
    },
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
    usage: 'settings ip-allowlist set CIDR,...',
    options: {},
    positionals: 1,
    async run(deps, ctx, _v, pos) {
      if (!pos[0]) throw new UsageError('the allowlist (CIDR,...) is required');
      const list = allowlistFrom(pos[0]);
      if (list.length === 0) throw new UsageError('empty allowlist; use "settings ip-allowlist clear"');
      const s = await setGlobalAllowlist(deps, ctx, list);
      return { json: s, text: `global API-key allowlist: ${s.globalAllowlist.join(', ')}` };
    },
  },
  'settings ip-allowlist clear': {
    usage: 'settings ip-allowlist clear',
    options: {},
    async run(deps, ctx) {
      const s = await setGlobalAllowlist(deps, ctx, []);
      return { json: s, text: 'global API-key allowlist cleared (no restriction)' };
    },
  },
  'settings ip-allowlist show': {
    usage: 'settings ip-allowlist show',
    options: {},
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
    usage: 'oauth-keys rotate',
    options: {},
    async run(deps) {
      const result = await rotateDevSigningKey(deps.config, deps.clock());
      return {
        json: result,
        text: `new signing key ${result.kid}; previous keys stay in the JWKS until ${result.retainUntil}`,
      };
    },
  },
  bootstrap: {
    usage: 'bootstrap --email E --name N [--if-none]',
    options: { email: { type: 'string' }, name: { type: 'string' }, 'if-none': { type: 'boolean' } },
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

/** Longest command name that prefixes argv. */
export function findCommand(argv: string[]): { name: string; command: Command; rest: string[] } | null {
  for (let words = 3; words >= 1; words--) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS[name];
    if (command && !argv.slice(0, words).some((w) => w.startsWith('-'))) {
      return { name, command, rest: argv.slice(words) };
    }
  }
  return null;
}

export { parse };
