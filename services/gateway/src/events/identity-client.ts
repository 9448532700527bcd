import { hash } from 'node:crypto';
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
import { staleAnswers } from '../metrics.js';
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
  /** How long past its expiry a cached answer may still be used while identity does not answer. */
  staleIfErrorMs: number;
}

/** Cache key for an API key value: its SHA-256, so the raw key is never kept or logged. */
// crypto.hash: one call, no Hash object (a third of createHash's cost on a key's few bytes).
export const hashCredential = (value: string) => hash('sha256', value, 'base64url');

const unavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'Credential service is unavailable; retry later');

/**
 * Everything the gateway asks identity (NATS request-reply), cached in-process with short TTLs.
 * Credential notices call the `drop*` methods so a revocation takes effect at once. When identity
 * does not answer, the last answer is used while it is at most `staleIfErrorMs` past its expiry
 * (stale-if-error, as Kong's `db_resurrect_ttl`): a revocation is a notice, which drops the entry,
 * so what is served stale is what nothing has changed since; expiry dates are still checked.
 */
export function createIdentityClient(o: IdentityClientOptions) {
  const stale = o.staleIfErrorMs;
  const keys = new TtlCache<string, ResolveApiKeyReply>(50_000, countedLookups('api_keys'), stale);
  const users = new TtlCache<string, UserSnapshot | null>(50_000, countedLookups('users'), stale);
  const clients = new TtlCache<string, OAuthClientInfo | null>(
    10_000,
    countedLookups('oauth_clients'),
    stale,
  );
  const settings = new TtlCache<'global', string[]>(1, undefined, stale);
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

  /**
   * A cached look-up: the fresh entry, else one call to identity shared by concurrent callers
   * (its answer cached for `ttlMs` of it, unless a notice came meanwhile), else, when identity
   * cannot be asked, the stale entry.
   */
  function cachedLookup<K, V>(cache: TtlCache<K, V>, name: string) {
    const flight = singleFlight<K, V>();
    return async (key: K, ask: () => Promise<V>, ttlMs: (value: V) => number): Promise<V> => {
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      try {
        return await flight(key, async () => {
          const started = generation;
          const value = await ask();
          if (started === generation) cache.set(key, value, ttlMs(value));
          return value;
        });
      } catch (err) {
        const last = err instanceof AppError ? cache.getStale(key) : undefined;
        if (last === undefined) throw err;
        staleAnswers.inc({ cache: name });
        return last;
      }
    };
  }
  const keyLookup = cachedLookup(keys, 'api_keys');
  const userLookup = cachedLookup(users, 'users');
  const clientLookup = cachedLookup(clients, 'oauth_clients');
  const settingsLookup = cachedLookup(settings, 'settings');

  return {
    resolveApiKey: (raw: string): Promise<ResolveApiKeyReply> =>
      keyLookup(
        hashCredential(raw),
        () => rpc('resolveApiKey', { key: raw }),
        (reply) =>
          reply.valid && reply.expiresAt
            ? Math.min(o.apiKeyTtlMs, Date.parse(reply.expiresAt) - Date.now())
            : o.apiKeyTtlMs,
      ),

    getUser: (id: string): Promise<UserSnapshot | null> =>
      userLookup(
        id,
        async () => {
          const reply = await rpc('getUser', { id });
          return reply.found ? reply.user : null;
        },
        () => o.userTtlMs,
      ),

    getOAuthClient: (clientId: string): Promise<OAuthClientInfo | null> =>
      clientLookup(
        clientId,
        async () => {
          const reply = await rpc('getOAuthClient', { id: clientId });
          return reply.found ? reply.client : null;
        },
        () => o.clientTtlMs,
      ),

    /** The global IP allowlist (settings), cached like a client; dropped by `settings_changed`. */
    globalAllowlist: (): Promise<string[]> =>
      settingsLookup(
        'global',
        async () => (await rpc('getSettings', {})).globalAllowlist,
        () => o.clientTtlMs,
      ),

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
