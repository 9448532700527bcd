import type { EventContext } from '@support-desk/platform/core';
import type { IdentityProviderDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import type { CurrentGroup, CurrentUser, SyncPlan } from './ldap-sync-plan.js';
import { provisionUser, setUserActive, setUserGroups } from './provisioning.js';
import { provisionGroup, removeProvisionedGroup } from './provisioning-groups.js';

/**
 * Carries out a sync plan through the provisioning use cases SCIM uses too, so every change is
 * one write with the same events as the API's (source `ldap`, the connection as actor). One
 * failing change (a mail a local user already has) is counted and the rest goes on; `keep` runs
 * before every write and throws when the lease is lost, which stops the run where it is (the
 * next run plans again from what was written).
 */

/** A connection's users and groups read in one sync at most (the directory's bound as well). */
const MAX_CONNECTION_ENTRIES = 100_000;

export interface ApplyCounts {
  usersCreated: number;
  usersUpdated: number;
  usersDeactivated: number;
  groupsChanged: number;
  membershipsChanged: number;
  errors: number;
  /** The first few failures, for the run's reason. */
  firstErrors: string[];
}

/** The connection's users and groups as the planner compares them. */
export async function currentState(
  deps: Deps,
  name: string,
): Promise<{ users: CurrentUser[]; groups: CurrentGroup[] }> {
  const groupDocs = await deps.groups.ofProvider(name, MAX_CONNECTION_ENTRIES);
  const externalOf = new Map(groupDocs.map((g) => [g._id, g.externalId ?? null]));
  const userDocs = await deps.users.ofProvider(name, MAX_CONNECTION_ENTRIES);
  return {
    groups: groupDocs.map((g) => ({ id: g._id, externalId: g.externalId ?? null, name: g.name })),
    users: userDocs.map((u) => ({
      id: u._id,
      externalId: u.externalId ?? null,
      email: u.email,
      name: u.name,
      active: u.status === 'active',
      metadata: u.metadata ?? {},
      groups: u.groups
        .map((g) => externalOf.get(g))
        .filter((x): x is string => typeof x === 'string')
        .sort(),
    })),
  };
}

export async function applyPlan(
  deps: Deps,
  connection: IdentityProviderDoc,
  ctx: EventContext,
  plan: SyncPlan,
  keep: () => Promise<void>,
): Promise<ApplyCounts> {
  const counts: ApplyCounts = {
    usersCreated: 0,
    usersUpdated: 0,
    usersDeactivated: 0,
    groupsChanged: 0,
    membershipsChanged: 0,
    errors: 0,
    firstErrors: [],
  };
  const step = async (what: string, change: () => Promise<unknown>, counter: keyof ApplyCounts) => {
    await keep();
    try {
      await change();
      (counts[counter] as number)++;
    } catch (err) {
      counts.errors++;
      if (counts.firstErrors.length < 3) counts.firstErrors.push(`${what}: ${(err as Error).message}`);
      deps.logger.warn({ err, connection: connection._id, what }, 'a directory sync change failed');
    }
  };
  const resolve = (kind: 'user' | 'group', externalId: string) =>
    deps.identityProviders.resolveExternal(kind, connection._id, externalId);

  // Groups first, so the memberships below can name the new ones.
  for (const g of plan.groups.create) {
    const input = { externalId: g.externalId, displayName: g.name };
    await step(`group ${g.dn}`, () => provisionGroup(deps, connection, ctx, input), 'groupsChanged');
  }
  for (const g of plan.groups.rename) {
    const input = { externalId: null, displayName: g.name };
    await step(`group ${g.name}`, () => provisionGroup(deps, connection, ctx, input, g.id), 'groupsChanged');
  }
  const provisioned = (u: SyncPlan['users']['create'][number]) => ({
    externalId: u.externalId,
    email: u.email,
    name: u.name,
    active: u.active,
    metadata: u.metadata,
  });
  for (const u of plan.users.create) {
    await step(`user ${u.dn}`, () => provisionUser(deps, connection, ctx, provisioned(u)), 'usersCreated');
  }
  for (const { id, user } of plan.users.update) {
    const change = () => provisionUser(deps, connection, ctx, provisioned(user), id);
    await step(`user ${user.dn}`, change, 'usersUpdated');
  }
  for (const m of plan.memberships) {
    await step(
      `memberships of ${m.externalId}`,
      async () => {
        const userId = await resolve('user', m.externalId);
        if (!userId) throw new Error('the user was not created');
        const groupIds = (await Promise.all(m.groups.map((g) => resolve('group', g)))).filter(
          (id): id is string => id !== null,
        );
        await setUserGroups(deps, connection, ctx, userId, () => groupIds);
      },
      'membershipsChanged',
    );
  }
  for (const u of plan.users.deactivate) {
    const change = () => setUserActive(deps, connection, ctx, u.id, false);
    await step(`user ${u.email}`, change, 'usersDeactivated');
  }
  for (const g of plan.groups.remove) {
    const change = () => removeProvisionedGroup(deps, connection, ctx, g.id);
    await step(`group ${g.name}`, change, 'groupsChanged');
  }
  return counts;
}
