import {
  type AggregateDecision,
  isDuplicateKeyError,
  type OutboxEntry,
  updateAggregate,
} from '@support-desk/platform';
import type { Connection } from 'mongoose';
import {
  type ApiKeyDoc,
  apiKeyModel,
  type OAuthClientDoc,
  oauthClientModel,
  SETTINGS_ID,
  type SettingsDoc,
  settingsModel,
} from './credentials.js';

type Decide<T, R> = (current: T) => AggregateDecision<R> | Promise<AggregateDecision<R>>;

/** API keys: only the secret's hash is stored, and read only to check a presented key. */
export function createApiKeysRepository(conn: Connection) {
  const model = apiKeyModel(conn);
  return {
    async insert(key: ApiKeyDoc, outbox: OutboxEntry[]): Promise<void> {
      await model.create({ ...key, outbox });
    },
    findById: (id: string) => model.findById(id).lean<ApiKeyDoc>().exec(),
    /** With the secret's hash: only for checking a presented key. */
    findWithSecretHash: (id: string) => model.findById(id).select('+secretHash').lean<ApiKeyDoc>().exec(),
    /** Newest first, all owners or one, bounded. */
    list: (ownerId?: string) =>
      model
        .find(ownerId ? { ownerId } : {})
        .sort({ createdAt: -1 })
        .limit(10_000)
        .lean<ApiKeyDoc[]>()
        .exec(),
    /** The owner's unrevoked keys (created before `before`, when given). */
    listLiveOf: (ownerId: string, before: Date | null) =>
      model
        .find({ ownerId, revokedAt: null, ...(before && { createdAt: { $lt: before } }) }, { _id: 1 })
        .limit(10_000)
        .lean<Pick<ApiKeyDoc, '_id'>[]>()
        .exec(),
    /** Unrevoked keys of that name (the demo seeder's per-run keys). */
    listActiveNamed: (name: string) =>
      model.find({ name, revokedAt: null }, { _id: 1 }).lean<Pick<ApiKeyDoc, '_id'>[]>().exec(),
    update: <R>(id: string, decide: Decide<ApiKeyDoc, R>) =>
      updateAggregate<ApiKeyDoc, R>(model, id, decide, { what: 'API key' }),
    /**
     * Records a use at most once per `granularityMs` per key. A usage mark, not a change of the
     * key: it neither emits an event nor competes with the key's revision (a lost mark is harmless).
     */
    async markUsed(id: string, at: Date, granularityMs: number): Promise<void> {
      await model.updateOne(
        {
          _id: id,
          $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: new Date(at.getTime() - granularityMs) } }],
        },
        { $set: { lastUsedAt: at } },
      );
    },
  };
}

/** OAuth clients: only a confidential client's secret hash is stored. */
export function createOAuthClientsRepository(conn: Connection) {
  const model = oauthClientModel(conn);
  return {
    async insert(client: OAuthClientDoc, outbox: OutboxEntry[]): Promise<void> {
      await model.create({ ...client, outbox });
    },
    /** With the secret's hash: only for authenticating the client. */
    findWithSecretHash: (id: string) =>
      model.findById(id).select('+secretHash').lean<OAuthClientDoc>().exec(),
  };
}

/** The one settings document (the global IP allowlist). */
export function createSettingsRepository(conn: Connection) {
  const model = settingsModel(conn);
  return {
    get: () => model.findById(SETTINGS_ID).lean<SettingsDoc>().exec(),
    /** Read-decide-write of the settings, created empty the first time. */
    async update<R>(decide: Decide<SettingsDoc, R>, now: Date): Promise<R> {
      try {
        await model.create({ _id: SETTINGS_ID, globalAllowlist: [], updatedAt: now });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      return updateAggregate<SettingsDoc & { _id: string }, R>(model, SETTINGS_ID, decide, {
        what: 'Settings',
      });
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;
export type OAuthClientsRepository = ReturnType<typeof createOAuthClientsRepository>;
export type SettingsRepository = ReturnType<typeof createSettingsRepository>;
