import type { GroupSnapshot, UserSnapshot } from '@support-desk/contracts';
import type { IdentityRpcClient, Logger } from '@support-desk/platform';
import type { DirectoryRepository, GroupEntry, UserEntry } from '../store/directory.js';

export class IdentityUnavailableError extends Error {}

/**
 * Users and groups as this service knows them: the read model fed by identity's events, with
 * one request-reply to identity for an id it has not seen yet.
 */
export class Directory {
  constructor(
    private readonly store: DirectoryRepository,
    private readonly identity: IdentityRpcClient,
    private readonly logger: Logger,
    private readonly clock: () => Date,
  ) {}

  /** From the read model; on a miss asks identity once and stores the answer. */
  async user(id: string): Promise<UserEntry | null> {
    return (await this.store.findUser(id)) ?? this.refreshUser(id);
  }

  async group(id: string): Promise<GroupEntry | null> {
    return (await this.store.findGroup(id)) ?? this.refreshGroup(id);
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
    const found = await this.store.findUsers(ids);
    return new Map(found.map((u) => [u._id, u]));
  }

  /** Fetches the current state from identity and stores it (or removes a user identity denies). */
  async refreshUser(id: string): Promise<UserEntry | null> {
    let snapshot: UserSnapshot | null;
    try {
      const reply = await this.identity.call('getUser', { id });
      snapshot = reply.found ? reply.user : null;
    } catch (err) {
      throw new IdentityUnavailableError(`identity did not answer for user ${id}: ${(err as Error).message}`);
    }
    if (!snapshot) {
      await this.store.removeUser(id);
      return null;
    }
    return this.storeUser(snapshot);
  }

  async refreshGroup(id: string): Promise<GroupEntry | null> {
    let snapshot: GroupSnapshot | null;
    try {
      const reply = await this.identity.call('getGroup', { id });
      snapshot = reply.found ? reply.group : null;
    } catch (err) {
      throw new IdentityUnavailableError(
        `identity did not answer for group ${id}: ${(err as Error).message}`,
      );
    }
    if (!snapshot) {
      await this.store.removeGroup(id);
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
      syncedAt: this.clock(),
    };
    await this.store.saveUser(entry);
    return entry;
  }

  async storeGroup(s: GroupSnapshot): Promise<GroupEntry> {
    const entry: GroupEntry = { _id: s.id, name: s.name, deleted: s.deleted, syncedAt: this.clock() };
    await this.store.saveGroup(entry);
    return entry;
  }
}
