import type { DirectoryGroup, DirectorySnapshot, DirectoryUser } from './directory.js';

/**
 * What one LDAP sync must change so Support Desk matches the directory: a pure function of the
 * directory's snapshot and the connection's users and groups as they are now. Computing the whole
 * plan from the current state every run is what makes an interrupted run safe to repeat: what it
 * already did no longer shows as a difference. The safety threshold lives here too, so no run
 * that would empty Support Desk because the directory answered nothing ever starts writing.
 */

/** A user the connection owns, as the plan compares it (groups as directory external ids). */
export interface CurrentUser {
  id: string;
  externalId: string | null;
  email: string;
  name: string;
  active: boolean;
  metadata: Record<string, string>;
  groups: string[];
}

/** A group the connection owns. */
export interface CurrentGroup {
  id: string;
  externalId: string | null;
  name: string;
}

export interface SyncPlan {
  groups: {
    create: DirectoryGroup[];
    rename: { id: string; name: string }[];
    remove: CurrentGroup[];
  };
  users: {
    create: DirectoryUser[];
    /** Users whose email, name, metadata or status differ (a reactivation included). */
    update: { id: string; user: DirectoryUser }[];
    /** Users the directory no longer lists, or lists as disabled. */
    deactivate: CurrentUser[];
  };
  /** Users (by external id) whose memberships of the connection's groups differ: the whole new set. */
  memberships: { externalId: string; groups: string[] }[];
  /** Directory entries left out: no id or mail, or a duplicate id or mail of an earlier entry. */
  skipped: { dn: string; reason: string }[];
}

export type PlanOutcome = { ok: true; plan: SyncPlan } | { ok: false; reason: string };

export interface PlanLimits {
  /** More deactivations than this percentage of the connection's active users stop the run. */
  maxDeactivatePercent: number;
}

const sameMetadata = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** Drops entries repeating an earlier entry's external id or email (both must be unique here). */
function uniqueUsers(users: DirectoryUser[], skipped: SyncPlan['skipped']): DirectoryUser[] {
  const ids = new Set<string>();
  const emails = new Set<string>();
  return users.filter((u) => {
    const email = u.email.toLowerCase();
    const reason = ids.has(u.externalId) ? 'duplicate id' : emails.has(email) ? 'duplicate mail' : null;
    if (reason) {
      skipped.push({ dn: u.dn, reason });
      return false;
    }
    ids.add(u.externalId);
    emails.add(email);
    return true;
  });
}

export function planSync(
  snapshot: DirectorySnapshot,
  current: { users: CurrentUser[]; groups: CurrentGroup[] },
  limits: PlanLimits,
): PlanOutcome {
  const skipped = [...snapshot.skipped];
  const directoryUsers = uniqueUsers(snapshot.users, skipped);
  const activeNow = current.users.filter((u) => u.active);

  // A directory that answers nothing is far likelier broken (a wrong base DN or filter, a replica
  // mid-restore) than emptied on purpose.
  if (directoryUsers.length === 0 && activeNow.length > 0) {
    return { ok: false, reason: `the directory returned no users; ${activeNow.length} would be deactivated` };
  }

  const byExternalId = new Map(current.users.filter((u) => u.externalId).map((u) => [u.externalId!, u]));
  const plan: SyncPlan = {
    groups: { create: [], rename: [], remove: [] },
    users: { create: [], update: [], deactivate: [] },
    memberships: [],
    skipped,
  };

  const groupsById = new Map(current.groups.filter((g) => g.externalId).map((g) => [g.externalId!, g]));
  const directoryGroupIds = new Set(snapshot.groups.map((g) => g.externalId));
  for (const group of snapshot.groups) {
    const existing = groupsById.get(group.externalId);
    if (!existing) plan.groups.create.push(group);
    else if (existing.name !== group.name) plan.groups.rename.push({ id: existing.id, name: group.name });
  }
  plan.groups.remove = current.groups.filter((g) => !g.externalId || !directoryGroupIds.has(g.externalId));

  const listed = new Set<string>();
  for (const user of directoryUsers) {
    listed.add(user.externalId);
    const existing = byExternalId.get(user.externalId);
    if (!existing) {
      plan.users.create.push(user);
      if (user.groups.length > 0) plan.memberships.push({ externalId: user.externalId, groups: user.groups });
      continue;
    }
    if (existing.active && !user.active) plan.users.deactivate.push(existing);
    else if (
      existing.email !== user.email ||
      existing.name !== user.name ||
      existing.active !== user.active ||
      !sameMetadata(existing.metadata, user.metadata)
    ) {
      plan.users.update.push({ id: existing.id, user });
    }
    if (!sameSet(existing.groups, user.groups))
      plan.memberships.push({ externalId: user.externalId, groups: user.groups });
  }
  for (const user of activeNow) {
    if (!user.externalId || !listed.has(user.externalId)) plan.users.deactivate.push(user);
  }

  const deactivations = plan.users.deactivate.length;
  if (deactivations * 100 > activeNow.length * limits.maxDeactivatePercent) {
    return {
      ok: false,
      reason:
        `${deactivations} of ${activeNow.length} active users would be deactivated, ` +
        `more than the ${limits.maxDeactivatePercent}% allowed`,
    };
  }
  return { ok: true, plan };
}
