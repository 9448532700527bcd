import { type AggregateDecision, isDuplicateKeyError, type OutboxEntry } from '@support-desk/platform/core';
import { insertWithOutbox, updateAggregate } from '@support-desk/platform/store';
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
      await insertWithOutbox(model, key, outbox);
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
    /**
     * The owner's unrevoked keys (created before `before`, when given). One equality reaches the
     * store (the one a backend can answer from an index); the rest is checked on the documents.
     */
    async listLiveOf(ownerId: string, before: Date | null): Promise<Pick<ApiKeyDoc, '_id'>[]> {
      const keys = await model
        .find({ ownerId }, { _id: 1, revokedAt: 1, createdAt: 1 })
        .limit(10_000)
        .lean<ApiKeyDoc[]>()
        .exec();
      return keys
        .filter((k) => !k.revokedAt && (!before || k.createdAt < before))
        .map(({ _id }) => ({ _id }));
    },
    /** Unrevoked keys of that name (the demo seeder's per-run keys); the name is the one condition sent. */
    async listActiveNamed(name: string): Promise<Pick<ApiKeyDoc, '_id'>[]> {
      const keys = await model.find({ name }, { _id: 1, revokedAt: 1 }).lean<ApiKeyDoc[]>().exec();
      return keys.filter((k) => !k.revokedAt).map(({ _id }) => ({ _id }));
    },
    update: <R>(id: string, decide: Decide<ApiKeyDoc, R>) =>
      updateAggregate<ApiKeyDoc, R>(model, id, decide, { what: 'API key' }),
    /**
     * Records a use. A usage mark, not a change of the key: it neither emits an event nor competes
     * with the key's revision (a lost mark is harmless). Whether one is due (at most one a minute)
     * is decided on the key as it was read: the write is by `_id` alone, which every store finds
     * without reading the whole collection (a condition on `lastUsedAt` FerretDB cannot push down).
     */
    async markUsed(id: string, at: Date): Promise<void> {
      await model.updateOne({ _id: id }, { $set: { lastUsedAt: at } });
    },
  };
}

/** OAuth clients: only a confidential client's secret hash is stored. */
export function createOAuthClientsRepository(conn: Connection) {
  const model = oauthClientModel(conn);
  return {
    async insert(client: OAuthClientDoc, outbox: OutboxEntry[]): Promise<void> {
      await insertWithOutbox(model, client, outbox);
    },
    /** With the secret's hash: only for authenticating the client. */
    findWithSecretHash: (id: string) =>
      model.findById(id).select('+secretHash').lean<OAuthClientDoc>().exec(),
    /** Every client, newest first (bounded; a deployment has a handful). */
    list: () => model.find({}).sort({ createdAt: -1 }).limit(10_000).lean<OAuthClientDoc[]>().exec(),
    update: <R>(id: string, decide: Decide<OAuthClientDoc, R>) =>
      updateAggregate<OAuthClientDoc, R>(model, id, decide, { what: 'OAuth client' }),
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
