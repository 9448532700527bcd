import type { Deps } from './deps.js';

/** Batches of the key back-fill, and how many at most a start runs (then the next start goes on). */
const BACKFILL_BATCH = 100;
const BACKFILL_BATCHES_MAX = 1000;

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
    let completed = 0;
    for (let batch = 0; batch < BACKFILL_BATCHES_MAX; batch++) {
      const n = await deps.users.completeListKeys(BACKFILL_BATCH);
      completed += n;
      if (n < BACKFILL_BATCH) break;
    }
    let groups = 0;
    for (let batch = 0; batch < BACKFILL_BATCHES_MAX; batch++) {
      const n = await deps.groups.completeLive(BACKFILL_BATCH);
      groups += n;
      if (n < BACKFILL_BATCH) break;
    }
    if (completed + groups > 0)
      deps.logger.info({ completed, groups }, 'stored users and groups given their list keys');
  } catch (err) {
    deps.logger.warn({ err }, 'giving stored users their list keys failed; retried at the next start');
  }
}
