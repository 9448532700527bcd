import type { Priority, RequestStatus, Role } from '@support-desk/contracts';
import { type Connection, Schema } from 'mongoose';
import { modelOn } from '../store/model.js';
import { DEMO_GROUPS, DEMO_USERS, PRIORITY_CYCLE, type RequestPlan, STATUS_CYCLE } from './seed-plan.js';

/**
 * Markers of `deskctl seed` in identity's database: `seed_runs` (one document per run id:
 * running/finished and the summary) and `seed_run_requests` (one per planned request: its id and
 * how many of its steps are done). One document per request keeps concurrent workers off a shared
 * document (FerretDB does not make concurrent updates of one document atomic).
 */
export interface SeedRunDoc {
  _id: string;
  status: 'running' | 'finished';
  requests: number;
  startedAt: Date;
  attempts: number;
  finishedAt: Date | null;
  summary: Record<string, unknown> | null;
}
export interface SeedRequestDoc {
  _id: string;
  runId: string;
  index: number;
  requestId: string | null;
  step: number;
}

export const seedRunModel = (conn: Connection) =>
  modelOn<SeedRunDoc>(
    conn,
    'SeedRun',
    new Schema<SeedRunDoc>(
      {
        _id: String,
        status: String,
        requests: Number,
        startedAt: Date,
        attempts: Number,
        finishedAt: Date,
        summary: Schema.Types.Mixed,
      },
      { collection: 'seed_runs', versionKey: false },
    ),
  );
export const seedRequestModel = (conn: Connection) =>
  modelOn<SeedRequestDoc>(
    conn,
    'SeedRunRequest',
    new Schema<SeedRequestDoc>(
      { _id: String, runId: String, index: Number, requestId: String, step: Number },
      { collection: 'seed_run_requests', versionKey: false },
    ),
  );

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
