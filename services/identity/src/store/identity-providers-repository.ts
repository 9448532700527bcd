import { type AggregateDecision, isDuplicateKeyError, type OutboxEntry } from '@support-desk/platform/core';
import { insertWithOutbox, updateAggregate } from '@support-desk/platform/store';
import type { Connection } from 'mongoose';
import {
  type ExternalIdDoc,
  externalIdModel,
  externalKey,
  type IdentityProviderDoc,
  identityProviderModel,
} from './identity-providers.js';

/** Identity provider connections, and the index from a connection's external ids to ours. */
export function createIdentityProvidersRepository(conn: Connection) {
  const model = identityProviderModel(conn);
  const links = externalIdModel(conn);
  const live = (doc: IdentityProviderDoc | null) => (doc && doc.deletedAt == null ? doc : null);
  return {
    /** The live connection of that name (deleted ones are kept for their events, not served). */
    findByName: async (name: string) => live(await model.findById(name).lean<IdentityProviderDoc>().exec()),

    /** With the token hash (authentication of a SCIM call). */
    findWithTokenHash: async (name: string) =>
      live(await model.findById(name).select('+tokenHash').lean<IdentityProviderDoc>().exec()),

    /** Every live connection, by name (a handful: read whole). */
    list: async () =>
      (await model.find({}).sort({ _id: 1 }).lean<IdentityProviderDoc[]>().exec()).filter((d) => live(d)),

    /** A new connection with its event; a taken name is a duplicate-key error. */
    async insert(doc: IdentityProviderDoc, outbox: OutboxEntry[]): Promise<void> {
      await insertWithOutbox(model, doc, outbox);
    },

    /**
     * Read-decide-write of one connection (compare-and-set on `rev`; 404, 409 as usual). With
     * `deleted: true` a deleted connection is decided on too (re-creating a name).
     */
    update<R>(
      name: string,
      decide: (current: IdentityProviderDoc) => AggregateDecision<R>,
      { deleted = false } = {},
    ) {
      return updateAggregate<IdentityProviderDoc, R>(model, name, decide, {
        what: 'Identity provider',
        visible: (doc) => deleted || live(doc) !== null,
      });
    },

    /** Our id for a connection's external id, or null. */
    async resolveExternal(kind: 'user' | 'group', connection: string, externalId: string) {
      const link = await links
        .findById(externalKey(kind, connection, externalId))
        .lean<ExternalIdDoc>()
        .exec();
      return link?.resourceId ?? null;
    },

    /**
     * Claims the external id for `resourceId`: true when claimed (or already ours), false when
     * another resource holds it. `isStale(holder)` says whether the holder is gone (a creation that
     * crashed after its claim), in which case the claim is taken over.
     */
    async claimExternal(
      kind: 'user' | 'group',
      connection: string,
      externalId: string,
      resourceId: string,
      isStale: (holder: string) => Promise<boolean>,
    ): Promise<boolean> {
      const _id = externalKey(kind, connection, externalId);
      try {
        await links.create({ _id, resourceId });
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const holder = await links.findById(_id).lean<ExternalIdDoc>().exec();
      if (!holder || holder.resourceId === resourceId) return true;
      if (!(await isStale(holder.resourceId))) return false;
      await links.updateOne({ _id }, { $set: { resourceId } });
      return true;
    },

    /** Frees the external id (a failed creation, a changed externalId, a deleted group). */
    async releaseExternal(
      kind: 'user' | 'group',
      connection: string,
      externalId: string,
      resourceId: string,
    ) {
      const _id = externalKey(kind, connection, externalId);
      const link = await links.findById(_id).lean<ExternalIdDoc>().exec();
      if (link?.resourceId === resourceId) await links.deleteOne({ _id });
    },
  };
}
