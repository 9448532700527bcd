import type { Role } from '@support-desk/contracts';
import { SeedApi } from './api.js';
import { type Deskctl, openDeskctl } from './deskctl.js';
import { createSeedingKeys, revokeKeys, revokeLeftoverKeys, type SeedingKeys } from './keys.js';
import {
  DEMO_GROUPS,
  DEMO_USERS,
  demoEmail,
  demoGroupName,
  type GroupKey,
  planRequest,
  runTag,
} from './plan.js';
import { seedRequests } from './requests.js';
import { progressWriter, readProgress, type RunProgress } from './state.js';
import { type Created, type Totals, totalsOf, zeroCreated } from './totals.js';

/**
 * `sd-seed --demo`: users, groups and temporary API keys of seeded users through the operator CLI
 * deskctl (events with source `cli`), then requests, comments, attachments and status moves
 * through the gateway with those keys, like any client. Idempotent per run id thanks to its
 * progress file (state.ts): a finished run is never repeated, an interrupted one resumes where it
 * stopped.
 */

export const MAX_REQUESTS = 5000;

export interface SeedOptions {
  runId: string;
  requests: number;
  url: string;
  /** The run's progress file (see state.ts). */
  stateFile: string;
  /** Told after each finished request: how many of how many, and the API calls made. */
  onProgress?: (done: number, total: number, apiCalls: number) => void;
}

export interface SeedResult {
  runId: string;
  tag: string;
  /** `seeded` (fresh run), `resumed` (finished an interrupted run), `already_seeded` (nothing done). */
  status: 'seeded' | 'resumed' | 'already_seeded';
  created: Created;
  totals: Totals;
  users: { id: string; email: string; name: string; role: Role; isVip: boolean }[];
  groups: { id: string; name: string }[];
  requestIds: string[];
  apiKeys: { created: number; revoked: number };
  apiCalls: number;
  seconds: number;
  finishedAt: string;
}

interface DeskctlUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  isVip: boolean;
  existed?: boolean;
}

/**
 * Groups and users of the run: reused when they exist (a resumed run), created otherwise. The
 * commands are all handed to deskctl's one batch process at once (it runs them in order), so none
 * waits for the answer to the one before; users wait only for the groups they join.
 */
async function seedIdentity(desk: Deskctl, runId: string, created: Created) {
  const groupIds = new Map<GroupKey, string>();
  const groups: SeedResult['groups'] = await Promise.all(
    DEMO_GROUPS.map(async (g) => {
      const name = demoGroupName(g.name, runId);
      const group = await desk.run<{ id: string; name: string; existed?: boolean }>([
        'groups',
        'create',
        '--name',
        name,
        '--description',
        g.description,
        '--if-not-exists',
      ]);
      if (!group.existed) created.groups += 1;
      groupIds.set(g.key, group.id);
      return { id: group.id, name: group.name };
    }),
  );
  const userIds = new Map<string, string>();
  const users: SeedResult['users'] = await Promise.all(
    DEMO_USERS.map(async (x) => {
      const user = await desk.run<DeskctlUser>([
        'users',
        'create',
        '--email',
        demoEmail(x.handle, runId),
        '--name',
        x.name,
        '--role',
        x.role,
        ...(x.isVip ? ['--vip'] : []),
        ...(x.groups.length > 0 ? ['--groups', x.groups.map((k) => groupIds.get(k)).join(',')] : []),
        '--if-not-exists',
      ]);
      if (!user.existed) created.users += 1;
      userIds.set(x.handle, user.id);
      return { id: user.id, email: user.email, name: user.name, role: user.role, isVip: user.isVip };
    }),
  );
  return { groupIds, userIds, groups, users };
}

export async function seedDemo(opts: SeedOptions): Promise<SeedResult> {
  const started = Date.now();
  const { runId } = opts;
  const previous = await readProgress(opts.stateFile);
  if (previous?.status === 'finished' && previous.summary) {
    return {
      ...(previous.summary as unknown as SeedResult),
      status: 'already_seeded',
      created: zeroCreated(),
      apiKeys: { created: 0, revoked: 0 },
      apiCalls: 0,
      seconds: (Date.now() - started) / 1000,
    };
  }
  const api = new SeedApi(opts.url);
  await api.ready();
  // An interrupted run keeps the size it started with, so its plan stays the same.
  const total = previous?.requests ?? opts.requests;
  const progress: RunProgress = previous
    ? { ...previous, attempts: previous.attempts + 1 }
    : {
        runId,
        status: 'running',
        requests: total,
        attempts: 1,
        startedAt: new Date().toISOString(),
        done: {},
        summary: null,
      };
  const save = progressWriter(opts.stateFile);
  await save(progress);

  const created = zeroCreated();
  const desk = openDeskctl();
  try {
    const { groupIds, userIds, groups, users } = await seedIdentity(desk, runId, created);
    // Keys left by an interrupted attempt (killed before it could revoke them) go first.
    const revokedLeftovers = previous ? await revokeLeftoverKeys(desk, runId) : 0;
    const plans = Array.from({ length: total }, (_, i) => planRequest(runId, i));
    const requestIds: string[] = new Array(total).fill('');
    const keys: SeedingKeys = new Map();
    let revoked = 0;
    try {
      await createSeedingKeys(
        desk,
        runId,
        DEMO_USERS.filter((d) => d.acts),
        keys,
      );
      await seedRequests({
        api,
        plans,
        keys,
        userIds,
        groupIds,
        progress,
        save,
        created,
        requestIds,
        runId,
        progressed: (done) => opts.onProgress?.(done, total, api.calls),
      });
    } finally {
      revoked = await revokeKeys(
        desk,
        [...keys.values()].map((k) => k.id),
      );
    }
    const summary = {
      runId,
      tag: runTag(runId),
      totals: totalsOf(plans),
      users,
      groups,
      requestIds,
      finishedAt: new Date().toISOString(),
    };
    await save({ ...progress, status: 'finished', summary });
    return {
      ...summary,
      status: previous ? 'resumed' : 'seeded',
      created,
      apiKeys: { created: keys.size, revoked: revoked + revokedLeftovers },
      apiCalls: api.calls,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await desk.close();
  }
}
