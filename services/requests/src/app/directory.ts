import type { GroupSnapshot, UserSnapshot } from '@support-desk/contracts';
import { isDuplicateKeyError, type Logger } from '@support-desk/platform';
import type { IdentityLookup } from '../events/identity-client.js';
import type { GroupEntry, GroupEntryModel, UserEntry, UserEntryModel } from '../store/directory.js';

export class IdentityUnavailableError extends Error {}

/**
 * Users and groups as this service knows them: the read model fed by identity's events, with
 * one request-reply to identity for an id it has not seen yet.
 */
export class Directory {
  constructor(
    private readonly users: UserEntryModel,
    private readonly groups: GroupEntryModel,
    private readonly identity: IdentityLookup,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  /** From the read model; on a miss asks identity once and stores the answer. */
  async user(id: string): Promise<UserEntry | null> {
    const known = await this.users.findById(id).lean();
    if (known) return known;
    return this.refreshUser(id);
  }

  async group(id: string): Promise<GroupEntry | null> {
    const known = await this.groups.findById(id).lean();
    if (known) return known;
    return this.refreshGroup(id);
  }

  /** Like `user` but never throws: rendering falls back to the snapshot in the request. */
  async userOrNull(id: string): Promise<UserEntry | null> {
    try {
      return await this.user(id);
    } catch (err) {
      this.logger.warn({ err, userId: id }, 'user lookup failed; rendering from snapshot');
      return null;
    }
  }

  async groupOrNull(id: string): Promise<GroupEntry | null> {
    try {
      return await this.group(id);
    } catch (err) {
      this.logger.warn({ err, groupId: id }, 'group lookup failed');
      return null;
    }
  }

  /** Read model only (lists): one query for a page of ids. */
  async knownUsers(ids: string[]): Promise<Map<string, UserEntry>> {
    if (ids.length === 0) return new Map();
    const found = await this.users.find({ _id: { $in: [...new Set(ids)] } }).lean();
    return new Map(found.map((u) => [u._id, u]));
  }

  /** Fetches the current state from identity and stores it (or removes a user identity denies). */
  async refreshUser(id: string): Promise<UserEntry | null> {
    let snapshot: UserSnapshot | null;
    try {
      snapshot = await this.identity.getUser(id);
    } catch (err) {
      throw new IdentityUnavailableError(`identity did not answer for user ${id}: ${(err as Error).message}`);
    }
    if (!snapshot) {
      await this.users.deleteOne({ _id: id });
      return null;
    }
    return this.storeUser(snapshot);
  }

  async refreshGroup(id: string): Promise<GroupEntry | null> {
    let snapshot: GroupSnapshot | null;
    try {
      snapshot = await this.identity.getGroup(id);
    } catch (err) {
      throw new IdentityUnavailableError(
        `identity did not answer for group ${id}: ${(err as Error).message}`,
      );
    }
    if (!snapshot) {
      await this.groups.deleteOne({ _id: id });
      return null;
    }
    return this.storeGroup(snapshot);
  }

  async storeUser(s: UserSnapshot): Promise<UserEntry> {
    const entry: UserEntry = {
      _id: s.id,
      email: s.email,
      name: s.name,
      role: s.role,
      status: s.status,
      isVip: s.isVip,
      groupIds: s.groups.map((g) => g.id),
      updatedAt: new Date(s.updatedAt),
      syncedAt: this.now(),
    };
    await upsert(() => this.users.replaceOne({ _id: s.id }, entry, { upsert: true }));
    return entry;
  }

  async storeGroup(s: GroupSnapshot): Promise<GroupEntry> {
    const entry: GroupEntry = { _id: s.id, name: s.name, deleted: s.deleted, syncedAt: this.now() };
    await upsert(() => this.groups.replaceOne({ _id: s.id }, entry, { upsert: true }));
    return entry;
  }
}

/**
 * Two first sightings of one id (a request and the event consumer, or two requests) both try to
 * insert it; the loser gets a duplicate key. The entry exists by then, so once more replaces it.
 */
async function upsert(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    await write();
  }
}
