import {
  buildEvent,
  conflict,
  eventEntry,
  type PeriodicTask,
  periodicTask,
} from '@support-desk/platform/core';
import { ldapSyncs } from '../metrics.js';
import type { IdentityProviderDoc, SyncOutcome, SyncRunSummary } from '../store/index.js';
import type { Deps } from './deps.js';
import { type DirectoryGroup, normalizeDn } from './directory.js';
import { connectionResourceId, findIdentityProvider, provisioningContext } from './identity-providers.js';
import { ldapSettings, secretsPolicy } from './ldap-settings.js';
import { planSync } from './ldap-sync-plan.js';
import { applyPlan, currentState } from './ldap-sync-apply.js';
import { type SyncRunView, syncRunView } from './ldap-sync-view.js';
import { acquireSyncLease } from './sync-lease.js';

/**
 * One LDAP directory sync of a connection: under the connection's lease, read the whole directory,
 * plan against what the connection owns now, stop if the plan crosses the safety threshold,
 * apply it, and end with one `system.sync_completed` event whatever the outcome (written with the
 * run's summary on the connection, one document write through its outbox).
 */

class LeaseLost extends Error {}

export interface SyncOptions {
  trigger: 'schedule' | 'cli';
  /** This run only: another threshold (an administrator confirming a large removal). */
  maxDeactivatePercent?: number;
  /** Scheduled runs: run only if the connection is due (checked again under the lease). */
  onlyIfDue?: boolean;
}

/** Whether a scheduled sync of the connection is due at `now`. */
function isSyncDue(connection: IdentityProviderDoc, now: Date): boolean {
  if (connection.kind !== 'ldap' || connection.disabled || !connection.ldap) return false;
  const interval = Number(connection.ldap.intervalMinutes ?? 0);
  if (!(interval > 0)) return false;
  const last = connection.lastSync?.startedAt;
  return !last || now.getTime() - new Date(last).getTime() >= interval * 60_000;
}

/**
 * Runs one sync of the named LDAP connection. Null when a scheduled run finds nothing due or
 * another holder running; an on-demand run that finds another running is a 409.
 */
export async function runLdapSync(deps: Deps, name: string, opts: SyncOptions): Promise<SyncRunView | null> {
  const found = await findIdentityProvider(deps, name);
  if (found.kind !== 'ldap')
    throw conflict(`${name} is a ${found.kind} connection: only LDAP connections sync`);
  if (found.disabled) throw conflict(`${name} is disabled: enable it to sync`);
  const lease = await acquireSyncLease(deps.syncLeases, name, deps.clock);
  if (!lease) {
    if (opts.onlyIfDue) return null;
    throw conflict(`A sync of ${name} is already running`);
  }
  try {
    // Read again under the lease: another replica may have just finished a run.
    const connection = await findIdentityProvider(deps, name);
    if (opts.onlyIfDue && !isSyncDue(connection, deps.clock())) return null;
    const summary = await syncOnce(deps, connection, opts, async () => {
      if (!(await lease.renew())) throw new LeaseLost('the sync lease was lost (another replica took over)');
    });
    await recordRun(deps, connection, summary);
    return syncRunView(name, summary);
  } finally {
    await lease.release();
  }
}

async function syncOnce(
  deps: Deps,
  connection: IdentityProviderDoc,
  opts: SyncOptions,
  keep: () => Promise<void>,
): Promise<SyncRunSummary> {
  const startedAt = deps.clock();
  const started = Date.now();
  const counts = {
    usersCreated: 0,
    usersUpdated: 0,
    usersDeactivated: 0,
    groupsChanged: 0,
    membershipsChanged: 0,
    skipped: 0,
    errors: 0,
  };
  let outcome: SyncOutcome;
  let reason: string | null = null;
  try {
    // Checked again on every run: stored settings may predate a rule (or have been written around it).
    const settings = ldapSettings(connection.ldap, secretsPolicy(deps.config));
    const password = await deps.bindPassword(settings);
    const snapshot = await deps.readDirectory(settings, password, keep);
    const current = await currentState(deps, connection._id);
    const forRun = rulesByEntryId(connection, snapshot.groups);
    const limits = { maxDeactivatePercent: opts.maxDeactivatePercent ?? settings.maxDeactivatePercent };
    const decision = planSync(snapshot, current, limits);
    if (!decision.ok) {
      outcome = 'stopped';
      reason = decision.reason;
    } else {
      counts.skipped = decision.plan.skipped.length;
      const ctx = provisioningContext(connection);
      const applied = await applyPlan(deps, forRun, ctx, decision.plan, keep);
      const { firstErrors, ...tally } = applied;
      Object.assign(counts, tally);
      outcome = applied.errors > 0 ? 'partial' : 'succeeded';
      if (firstErrors.length > 0) reason = firstErrors.join('; ');
    }
  } catch (err) {
    outcome = err instanceof LeaseLost ? 'interrupted' : 'failed';
    reason = (err as Error).message;
  }
  const summary: SyncRunSummary = {
    trigger: opts.trigger,
    outcome,
    reason: reason && reason.slice(0, 1000),
    startedAt,
    finishedAt: deps.clock(),
    durationMs: Date.now() - started,
    ...counts,
  };
  ldapSyncs.inc({ trigger: opts.trigger, outcome });
  const log = deps.logger.child({ component: 'ldap-sync', connection: connection._id });
  if (outcome === 'succeeded') log.info(summary, 'directory sync done');
  else log.warn(summary, `directory sync ${outcome}`);
  return summary;
}

/**
 * The connection as this run applies it: a role rule naming a group by its DN names it by the
 * entry's id (the group's external id, which the role rules match) as the directory answered it.
 */
function rulesByEntryId(connection: IdentityProviderDoc, groups: DirectoryGroup[]): IdentityProviderDoc {
  const byDn = new Map(groups.map((g) => [normalizeDn(g.dn), g.externalId]));
  const groupRoles = (connection.groupRoles ?? []).map((r) => ({
    ...r,
    group: byDn.get(normalizeDn(r.group)) ?? r.group,
  }));
  return { ...connection, groupRoles };
}

/** The run's summary on the connection and its `system.sync_completed`, in one write. */
async function recordRun(deps: Deps, connection: IdentityProviderDoc, s: SyncRunSummary) {
  const changes: Record<string, { from: null; to: unknown }> = {};
  const fields: Record<string, unknown> = {
    provider: connection._id,
    trigger: s.trigger,
    outcome: s.outcome,
    ...(s.reason ? { reason: s.reason } : {}),
    usersCreated: s.usersCreated,
    usersUpdated: s.usersUpdated,
    usersDeactivated: s.usersDeactivated,
    groupsChanged: s.groupsChanged,
    membershipsChanged: s.membershipsChanged,
    skipped: s.skipped,
    errors: s.errors,
    durationMs: s.durationMs,
  };
  for (const [k, v] of Object.entries(fields)) changes[k] = { from: null, to: v };
  const ctx = provisioningContext(connection);
  await deps.identityProviders.update(
    connection._id,
    () => {
      const event = buildEvent(
        'system.sync_completed',
        connectionResourceId(connection._id),
        ctx,
        changes,
        s.finishedAt,
      );
      return { write: { set: { lastSync: s }, outbox: [eventEntry(deps.names, event)] }, result: undefined };
    },
    // A connection deleted during the run still gets its run's record and event.
    { deleted: true },
  );
}

/**
 * The scheduled syncs of this replica: every `tickMs` it looks for LDAP connections whose
 * interval has passed and runs them one at a time; the lease makes sure only one replica runs
 * each (the others find it held, or find it no longer due once they get it).
 */
export function createLdapSyncScheduler(deps: Deps, opts: { tickMs: number }): PeriodicTask<number> {
  const logger = deps.logger.child({ component: 'ldap-sync' });
  return periodicTask({
    name: 'ldap sync pass',
    intervalMs: opts.tickMs,
    logger,
    onError: 0,
    run: async () => {
      let ran = 0;
      const now = deps.clock();
      for (const connection of await deps.identityProviders.list()) {
        if (!isSyncDue(connection, now)) continue;
        try {
          if (await runLdapSync(deps, connection._id, { trigger: 'schedule', onlyIfDue: true })) ran++;
        } catch (err) {
          // One connection's trouble (disabled meanwhile, the store) must not hold up the others.
          logger.error({ err, connection: connection._id }, 'scheduled directory sync failed');
        }
      }
      return ran;
    },
  });
}
