import { dayKey, hourKey, monthKey } from '@support-desk/platform/core';
import { initialRank, searchKeysOf } from '@support-desk/platform/store';
import type { UserDoc } from './users.js';

/**
 * The keys a user keeps beside its fields so that every users list is read by top-level
 * equalities, the only conditions FerretDB on PostgreSQL pushes down (issue 31): the hour, day
 * and month of its creation and of its last change (the time-sorted lists' walk, `hourWalk`),
 * the rank of the first character of its name and of its email (the name- and email-sorted
 * lists' walk, `initialWalk`), and the search keys.
 */

/** What the keys are derived from. */
type KeySource = Pick<UserDoc, 'name' | 'emailKey' | 'email' | 'createdAt' | 'updatedAt'>;

export function userListKeys(user: KeySource) {
  return {
    createdHour: hourKey(user.createdAt),
    createdDay: dayKey(user.createdAt),
    createdMonth: monthKey(user.createdAt),
    updatedHour: hourKey(user.updatedAt),
    updatedDay: dayKey(user.updatedAt),
    updatedMonth: monthKey(user.updatedAt),
    nameRank: initialRank(user.name),
    emailRank: initialRank(user.emailKey),
    searchKeys: searchKeysOf(user.name, user.email),
  };
}

/** The fields a write must set for the keys to follow it. */
export const KEYED_FIELDS = ['name', 'email', 'emailKey', 'createdAt', 'updatedAt'] as const;
