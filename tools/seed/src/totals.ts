import type { Priority, RequestStatus, Role } from '@support-desk/contracts';
import { DEMO_GROUPS, DEMO_USERS, PRIORITY_CYCLE, type RequestPlan, STATUS_CYCLE } from './plan.js';

/** What a run holds, from its plan: users by role, groups, requests by status and priority, ... */
export interface Totals {
  users: number;
  byRole: Record<Role, number>;
  vip: number;
  groups: number;
  requests: number;
  byStatus: Record<RequestStatus, number>;
  byPriority: Record<Priority, number>;
  comments: number;
  internalComments: number;
  attachments: number;
}

export function totalsOf(plans: RequestPlan[]): Totals {
  const byRole = { admin: 0, agent: 0, viewer: 0 } as Record<Role, number>;
  for (const x of DEMO_USERS) byRole[x.role] += 1;
  const byStatus = Object.fromEntries(STATUS_CYCLE.map((s) => [s, 0])) as Record<RequestStatus, number>;
  const byPriority = Object.fromEntries(PRIORITY_CYCLE.map((p) => [p, 0])) as Record<Priority, number>;
  let comments = 0;
  let internalComments = 0;
  let attachments = 0;
  for (const p of plans) {
    byStatus[p.status] += 1;
    byPriority[p.priority] += 1;
    for (const s of p.steps) {
      if (s.kind === 'comment') {
        comments += 1;
        if (s.isInternal) internalComments += 1;
      }
      if (s.kind === 'attach') attachments += 1;
    }
  }
  return {
    users: DEMO_USERS.length,
    byRole,
    vip: DEMO_USERS.filter((x) => x.isVip).length,
    groups: DEMO_GROUPS.length,
    requests: plans.length,
    byStatus,
    byPriority,
    comments,
    internalComments,
    attachments,
  };
}

/** What this run itself created (a resumed run counts only its own part). */
export const zeroCreated = () => ({
  users: 0,
  groups: 0,
  requests: 0,
  comments: 0,
  attachments: 0,
  updates: 0,
});
export type Created = ReturnType<typeof zeroCreated>;
