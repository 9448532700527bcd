import { createHash } from 'node:crypto';
import type {
  GetOAuthClientReply,
  IdentityRpc,
  IdentityRpcName,
  NatsNames,
  ResolveApiKeyReply,
  UserSnapshot,
} from '@support-desk/contracts';
import { AppError, singleFlight, TtlCache } from '@support-desk/platform/core';
import { identityRpcClient } from '@support-desk/platform/clients';
import type { MessageSigner, NatsConnection } from '@support-desk/platform/messaging';
import { countedLookups } from '../store/cache-lookups.js';

export type OAuthClientInfo = Extract<GetOAuthClientReply, { found: true }>['client'];

export interface IdentityClientOptions {
  nc: NatsConnection;
  names: NatsNames;
  /** The gateway's key: identity answers only requests the gateway signed. */
  signer: MessageSigner;
  rpcTimeoutMs: number;
  apiKeyTtlMs: number;
  userTtlMs: number;
  clientTtlMs: number;
}

/** Cache key for an API key value: its SHA-256, so the raw key is never kept or logged. */
export const hashCredential = (value: string) => createHash('sha256').update(value).digest('base64url');

const unavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'Credential service is unavailable; retry later');

/**
 * Everything the gateway asks identity (NATS request-reply), cached in-process with short TTLs.
 * Credential notices call the `drop*` methods so a revocation takes effect at once.
 */
export function createIdentityClient(o: IdentityClientOptions) {
  const keys = new TtlCache<string, ResolveApiKeyReply>(50_000, countedLookups('api_keys'));
  const users = new TtlCache<string, UserSnapshot | null>(50_000, countedLookups('users'));
  const clients = new TtlCache<string, OAuthClientInfo | null>(10_000, countedLookups('oauth_clients'));
  const keyFlight = singleFlight<string, ResolveApiKeyReply>();
  const userFlight = singleFlight<string, UserSnapshot | null>();
  const clientFlight = singleFlight<string, OAuthClientInfo | null>();
  const settings = new TtlCache<'global', string[]>(1);
  const settingsFlight = singleFlight<'global', string[]>();
  // Bumped by every notice: a look-up that started before a notice must not repopulate the cache.
  let generation = 0;

  const client = identityRpcClient(o.nc, o.names, o.rpcTimeoutMs, o.signer);
  async function rpc<K extends IdentityRpcName>(
    name: K,
    request: IdentityRpc[K]['request'],
  ): Promise<IdentityRpc[K]['reply']> {
    try {
      return await client.call(name, request);
    } catch {
      throw unavailable();
    }
  }

  return {
    async resolveApiKey(raw: string): Promise<ResolveApiKeyReply> {
      const hash = hashCredential(raw);
      const cached = keys.get(hash);
      if (cached) return cached;
      return keyFlight(hash, async () => {
        const started = generation;
        const reply = await rpc('resolveApiKey', { key: raw });
        let ttl = o.apiKeyTtlMs;
        if (reply.valid && reply.expiresAt) ttl = Math.min(ttl, Date.parse(reply.expiresAt) - Date.now());
        if (started === generation) keys.set(hash, reply, ttl);
        return reply;
      });
    },

    async getUser(id: string): Promise<UserSnapshot | null> {
      const cached = users.get(id);
      if (cached !== undefined) return cached;
      return userFlight(id, async () => {
        const started = generation;
        const reply = await rpc('getUser', { id });
        const user = reply.found ? reply.user : null;
        if (started === generation) users.set(id, user, o.userTtlMs);
        return user;
      });
    },

    async getOAuthClient(clientId: string): Promise<OAuthClientInfo | null> {
      const cached = clients.get(clientId);
      if (cached !== undefined) return cached;
      return clientFlight(clientId, async () => {
        const started = generation;
        const reply = await rpc('getOAuthClient', { id: clientId });
        const client = reply.found ? reply.client : null;
        if (started === generation) clients.set(clientId, client, o.clientTtlMs);
        return client;
      });
    },

    /** The global IP allowlist (settings), cached like a client; dropped by `settings_changed`. */
    async globalAllowlist(): Promise<string[]> {
      const cached = settings.get('global');
      if (cached) return cached;
      return settingsFlight('global', async () => {
        const started = generation;
        const { globalAllowlist } = await rpc('getSettings', {});
        if (started === generation) settings.set('global', globalAllowlist, o.clientTtlMs);
        return globalAllowlist;
      });
    },

    dropKey(keyId: string) {
      generation++;
      keys.deleteWhere((r) => r.valid && r.keyId === keyId);
      // Negative answers are not keyed by id; they are harmless to keep (already refused).
    },
    dropUser(userId: string) {
      generation++;
      users.delete(userId);
      keys.deleteWhere((r) => r.valid && r.owner.id === userId);
    },
    dropAllKeys() {
      generation++;
      keys.clear();
    },
    dropClients() {
      generation++;
      clients.clear();
    },
    dropSettings() {
      generation++;
      settings.clear();
    },
  };
}

export type IdentityClient = ReturnType<typeof createIdentityClient>;
