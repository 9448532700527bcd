import { TtlCache } from '@support-desk/platform/core';
import type { GroupDoc } from './groups.js';

/**
 * What a user view needs of a group: its name, and whether it still counts (not deleted); and who
 * owns it (`local`, or an identity provider connection), which /v1 membership changes check.
 */
export interface GroupEntry {
  name: string;
  deleted: boolean;
  identityProvider: string;
}

/** Entries kept at most; past it the least recently used go (groups are few: a safety bound). */
const MAX_ENTRIES = 10_000;

/**
 * Group names remembered for `ttlMs`, so a user view (a user's read, its snapshot for the
 * gateway and requests, a page of users) names its groups without a read per call. This process's
 * own group writes replace their entry at once; another replica's writes are forgotten when their
 * `system.config_changed` event arrives (`forgetOnConfigChanges`, in the composition), and at the latest after `ttlMs`.
 * `ttlMs` 0 remembers nothing.
 */
export function createGroupDirectory(ttlMs: number, now: () => number = Date.now) {
  const entries = new TtlCache<string, GroupEntry>(MAX_ENTRIES);
  // Bumped by every `forget`: a read that started before a change must not remember what it read.
  let generation = 0;
  return {
    /** Pass it to `remember` with what a read returns. */
    generation: () => generation,
    get: (id: string): GroupEntry | undefined => entries.get(id, now()),
    remember(
      group: Pick<GroupDoc, '_id' | 'name' | 'deletedAt' | 'identityProvider'>,
      readAt = generation,
    ): void {
      if (readAt !== generation) return;
      const entry = {
        name: group.name,
        deleted: group.deletedAt != null,
        identityProvider: group.identityProvider ?? 'local',
      };
      entries.set(group._id, entry, ttlMs, now());
    },
    forget(id: string): void {
      generation++;
      entries.delete(id);
    },
  };
}
