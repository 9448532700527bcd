import type { GroupSnapshot, UserSnapshot } from '@support-desk/contracts';
import { type IdentityRpcClient, type Logger, TtlCache } from '@support-desk/platform/core';
import type { DirectoryRepository, GroupEntry, UserEntry } from '../store/directory.js';

export class IdentityUnavailableError extends Error {}

/** Entries the directory keeps in memory at most (the oldest make room). */
const CACHE_MAX_ENTRIES = 10_000;

/**
 * Users and groups as this service knows them: the read model fed by identity's events, with
 * one request-reply to identity for an id it has not seen yet, and the entries in use held in
 * memory for a few seconds (`cacheTtlMs`).
 */
export class Directory {
  // Read-model entries recently read or written by this process, for `cacheTtlMs`, so that
  // rendering a request asks the store only for the request. This process's own read-model consumer
  // replaces an entry as it stores it; a change consumed by another replica is seen here once the
  // entry expires, which bounds how stale a name or VIP flag can be (identity's events already
  // arrive asynchronously). An id the read model does not have is remembered as absent too
  // (`null`), for rendering only: a comment's author who never came through the directory costs no
  // read per view.
  private readonly users = new TtlCache<string, UserEntry | null>(CACHE_MAX_ENTRIES);
  private readonly groups = new TtlCache<string, GroupEntry | null>(CACHE_MAX_ENTRIES);

  constructor(
    private readonly store: DirectoryRepository,
    private readonly identity: IdentityRpcClient,
    private readonly logger: Logger,
    private readonly clock: () => Date,
    private readonly cacheTtlMs = 0,
  ) {}

  /**
   * From memory or the read model; on a miss asks identity once and stores the answer (an id
   * remembered as absent is looked for again: identity decides).
   */
  async user(id: string): Promise<UserEntry | null> {
    const cached = this.users.get(id);
    if (cached) return cached;
    const stored = await this.store.findUser(id);
    if (!stored) return this.refreshUser(id);
    this.users.set(id, stored, this.cacheTtlMs);
    return stored;
  }

  async group(id: string): Promise<GroupEntry | null> {
    const cached = this.groups.get(id);
    if (cached) return cached;
    const stored = await this.store.findGroup(id);
    if (!stored) return this.refreshGroup(id);
    this.groups.set(id, stored, this.cacheTtlMs);
    return stored;
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

  /** Memory and read model only (lists, authors): one query for the ids not in memory. */
  async knownUsers(ids: string[]): Promise<Map<string, UserEntry>> {
    const known = new Map<string, UserEntry>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const cached = this.users.get(id);
      if (cached) known.set(id, cached);
      else if (cached === undefined) missing.push(id);
    }
    const found = new Map((await this.store.findUsers(missing)).map((u) => [u._id, u]));
    for (const id of missing) {
      const entry = found.get(id) ?? null;
      this.users.set(id, entry, this.cacheTtlMs);
      if (entry) known.set(id, entry);
    }
    return known;
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
      this.users.set(id, null, this.cacheTtlMs);
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
      this.groups.set(id, null, this.cacheTtlMs);
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
    this.users.set(entry._id, entry, this.cacheTtlMs);
    return entry;
  }

  async storeGroup(s: GroupSnapshot): Promise<GroupEntry> {
    const entry: GroupEntry = { _id: s.id, name: s.name, deleted: s.deleted, syncedAt: this.clock() };
    await this.store.saveGroup(entry);
    this.groups.set(entry._id, entry, this.cacheTtlMs);
    return entry;
  }
}
