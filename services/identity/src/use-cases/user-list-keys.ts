import { completeInBatches } from '@support-desk/platform/core';
import type { Deps } from './deps.js';

/**
 * Gives the users stored before the list keys existed their keys, at start, after finding the
 * lists' bounds: the hours, days and months the time-sorted lists walk, the initials of the name
 * and email, the search keys (without them no list finds the user; a look-up by id or email
 * does); and groups their `live` flag (the groups list's equality). In batches of 100, at most
 * 100,000 a start; logged, never fatal: the lists still
 * answer, and the next start goes on.
 */
export async function completeStoredUsers(deps: Deps): Promise<void> {
  try {
    await deps.users.ensureListBounds();
    const completed = await completeInBatches((n) => deps.users.completeListKeys(n));
    const groups = await completeInBatches((n) => deps.groups.completeLive(n));
    if (completed + groups > 0)
      deps.logger.info({ completed, groups }, 'stored users and groups given their list keys');
  } catch (err) {
    deps.logger.warn({ err }, 'giving stored users their list keys failed; retried at the next start');
  }
}
