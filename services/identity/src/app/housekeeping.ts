import { deleteInBatches, type PeriodicTask, periodicTask } from '@support-desk/platform';
import type { FilterQuery } from 'mongoose';
import type { GrantDoc } from '../store/index.js';
import type { Deps } from './context.js';

export interface PurgeCounts {
  sessions: number;
  loginAttempts: number;
  grants: number;
}

const NOTHING: PurgeCounts = { sessions: 0, loginAttempts: 0, grants: 0 };

/**
 * A grant is spent once nothing issued from it can still be used: its code expired unredeemed, its
 * refresh-token family expired, or it was revoked — each plus one access-token lifetime, after which
 * no access token carrying its `gid` can still be valid. A grant whose events still wait for the
 * outbox relay is kept until they are published.
 */
export function spentGrants(now: Date, accessTtlSeconds: number): FilterQuery<GrantDoc> {
  const cutoff = new Date(now.getTime() - accessTtlSeconds * 1000);
  return {
    'outbox.id': { $exists: false },
    $or: [
      { codeUsedAt: null, codeExpiresAt: { $lt: cutoff } },
      { refreshExpiresAt: { $lt: cutoff } },
      { revokedAt: { $lt: cutoff } },
    ],
  };
}

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
  const { config, store } = deps;

  const purgeOnce = async (now = deps.clock()): Promise<PurgeCounts> => {
    const windowStart = new Date(now.getTime() - config.LOGIN_THROTTLE_WINDOW_SECONDS * 1000);
    const counts: PurgeCounts = {
      sessions: await deleteInBatches(
        store.sessions,
        { expiresAt: { $lte: now } },
        { sort: { expiresAt: 1 }, ...bounds },
      ),
      loginAttempts: await deleteInBatches(
        store.loginAttempts,
        { windowStart: { $lte: windowStart } },
        { sort: { windowStart: 1 }, ...bounds },
      ),
      grants: await deleteInBatches(store.grants, spentGrants(now, config.OAUTH_ACCESS_TTL_SECONDS), {
        sort: { _id: 1 },
        ...bounds,
      }),
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
