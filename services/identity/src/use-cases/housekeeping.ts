import { type PeriodicTask, periodicTask } from '@support-desk/platform/core';
import type { Deps } from './deps.js';

export interface PurgeCounts {
  sessions: number;
  loginAttempts: number;
  grants: number;
}

const NOTHING: PurgeCounts = { sessions: 0, loginAttempts: 0, grants: 0 };

/**
 * Deletes what identity no longer needs, so its collections stay bounded under login attacks and
 * token churn: expired browser sessions, failed-login counters whose window has passed, and spent
 * OAuth grants. A database-side TTL index would do the first two on MongoDB, but FerretDB v1 has
 * none, and grants need a compound condition; one bounded periodic pass serves both databases.
 * Every replica may run it: deletes are idempotent and re-check their condition.
 */
export function createHousekeeping(
  deps: Deps,
  opts: { intervalMs: number; batch?: number; maxRounds?: number },
): PeriodicTask<PurgeCounts> & { purgeOnce(now?: Date): Promise<PurgeCounts> } {
  const bounds = { batch: opts.batch ?? 500, maxRounds: opts.maxRounds ?? 20 };
  const log = deps.logger.child({ component: 'housekeeping' });
  const { config } = deps;

  const purgeOnce = async (now = deps.clock()): Promise<PurgeCounts> => {
    const windowStart = new Date(now.getTime() - config.LOGIN_THROTTLE_WINDOW_SECONDS * 1000);
    // A spent grant is kept one access-token lifetime more: no token carrying its gid is valid then.
    const grantCutoff = new Date(now.getTime() - config.OAUTH_ACCESS_TTL_SECONDS * 1000);
    const counts: PurgeCounts = {
      sessions: await deps.sessions.purgeExpired(now, bounds),
      loginAttempts: await deps.loginAttempts.purgeLapsed(windowStart, bounds),
      grants: await deps.grants.purgeSpent(grantCutoff, bounds),
    };
    if (counts.sessions + counts.loginAttempts + counts.grants > 0)
      log.info(counts, 'purged expired records');
    return counts;
  };

  const task = periodicTask({
    name: 'housekeeping pass',
    intervalMs: opts.intervalMs,
    logger: log,
    run: () => purgeOnce(),
    onError: NOTHING,
  });
  return { ...task, purgeOnce };
}
