import { PLANS, type Plan } from '@support-desk/contracts';
import {
  type ApiKeyView,
  countOf,
  createApiKey,
  createOAuthClient,
  listApiKeys,
  listOAuthClients,
  type OAuthClientView,
  parseAllowlist,
  revokeApiKey,
  revokeOAuthClient,
} from '@support-desk/identity/admin';
import { parseDuration, positiveInt, required, UsageError } from '../args.js';
import { ifNotExists, oneOf, type Run, when } from '../command.js';
import { credentialCommands } from '../commands/credentials.js';
import { listRun } from './list.js';

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

/** API keys and OAuth clients: the credentials an administrator issues and revokes. */
export const runs: Record<string, Run> = {
  async 'api-keys create'(deps, ctx, v) {
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
  'api-keys list': listRun<ApiKeyView>(credentialCommands['api-keys list'], {
    key: 'keys',
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
  async 'api-keys revoke'(deps, ctx, _v, pos) {
    const id = pos[0];
    const result = await revokeApiKey(deps, ctx, id);
    return { json: result, text: result.alreadyRevoked ? `${id} was already revoked` : `revoked ${id}` };
  },
  async 'oauth-clients create'(deps, ctx, v) {
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
  'oauth-clients list': listRun<OAuthClientView>(credentialCommands['oauth-clients list'], {
    key: 'clients',
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
  async 'oauth-clients revoke'(deps, ctx, _v, pos) {
    const r = await revokeOAuthClient(deps, ctx, pos[0]);
    return {
      json: r,
      text: r.alreadyRevoked
        ? `${r.client_id} was already revoked`
        : `revoked ${r.client_id} and ${countOf(r.grantsRevoked, 'grant')}`,
    };
  },
};
