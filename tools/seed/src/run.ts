import type { Role } from '@support-desk/contracts';
import { SeedApi } from './api.js';
import { deskctl } from './deskctl.js';
import { demoFile } from './files.js';
import {
  DEMO_GROUPS,
  DEMO_USERS,
  demoEmail,
  demoGroupName,
  type GroupKey,
  planRequest,
  runTag,
  type Step,
} from './plan.js';
import { progressWriter, readProgress, type RunProgress } from './state.js';
import { type Totals, totalsOf } from './totals.js';

/**
 * `sd-seed --demo`: users, groups and temporary API keys of seeded users through the operator CLI
 * deskctl (events with source `cli`), then requests, comments, attachments and status moves
 * through the gateway with those keys, like any client. Idempotent per run id thanks to its
 * progress file (state.ts): a finished run is never repeated, an interrupted one resumes where it
 * stopped.
 */

export const MAX_REQUESTS = 5000;
const WORKERS = 8;
/** Seeding keys expire on their own if the process dies before revoking them. */
const KEY_LIFETIME_SECONDS = 3600;
const KEY_LIMIT = 100_000;
const keyName = (runId: string) => `deskctl seed ${runId}`;

export interface SeedOptions {
  runId: string;
  requests: number;
  url: string;
  /** The run's progress file (see state.ts). */
  stateFile: string;
}

const zeroCreated = () => ({ users: 0, groups: 0, requests: 0, comments: 0, attachments: 0, updates: 0 });
export type Created = ReturnType<typeof zeroCreated>;

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
 * deskctl runs at a time: each run is a process that mostly waits on the database (connecting,
 * checking indexes, relaying its events), so a few at once finish the identity part sooner.
 */
const DESKCTL_PARALLELISM = 5;

/** `work` for every item, at most `width` at a time, results in item order. */
async function inBatches<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

/** Groups and users of the run: reused when they exist (a resumed run), created otherwise. */
async function seedIdentity(runId: string, created: Created) {
  const groupIds = new Map<GroupKey, string>();
  const groups: SeedResult['groups'] = await inBatches(DEMO_GROUPS, DESKCTL_PARALLELISM, async (g) => {
    const name = demoGroupName(g.name, runId);
    const group = await deskctl<{ id: string; name: string; existed?: boolean }>([
      'groups',
      'create',
      '--name',
      name,
      '--description',
      g.description,
      '--if-missing',
    ]);
    if (!group.existed) created.groups += 1;
    groupIds.set(g.key, group.id);
    return { id: group.id, name: group.name };
  });
  const userIds = new Map<string, string>();
  const users: SeedResult['users'] = await inBatches(DEMO_USERS, DESKCTL_PARALLELISM, async (x) => {
    const user = await deskctl<DeskctlUser>([
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
      '--if-missing',
    ]);
    if (!user.existed) created.users += 1;
    userIds.set(x.handle, user.id);
    return { id: user.id, email: user.email, name: user.name, role: user.role, isVip: user.isVip };
  });
  return { groupIds, userIds, groups, users };
}

/** Replaces `@user:<handle>` / `@group:<key>` placeholders of a planned body with real ids. */
function resolveRefs(
  body: Record<string, unknown>,
  userIds: Map<string, string>,
  groupIds: Map<GroupKey, string>,
) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string' && v.startsWith('@user:')) out[k] = userIds.get(v.slice(6));
    else if (typeof v === 'string' && v.startsWith('@group:')) out[k] = groupIds.get(v.slice(7) as GroupKey);
    else out[k] = v;
  }
  return out;
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
  const { groupIds, userIds, groups, users } = await seedIdentity(runId, created);

  const keys = new Map<string, { id: string; key: string }>();
  const revokeKey = async (id: string) => {
    const r = await deskctl<{ alreadyRevoked?: boolean }>(['api-keys', 'revoke', id]).catch(() => null);
    return r !== null && !r.alreadyRevoked;
  };
  // Keys left by an interrupted attempt (killed before it could revoke them) go first.
  let revokedLeftovers = 0;
  if (previous) {
    const listed = await deskctl<{ keys: { id: string; name: string; revokedAt: string | null }[] }>([
      'api-keys',
      'list',
    ]);
    const left = listed.keys.filter((k) => k.name === keyName(runId) && !k.revokedAt);
    revokedLeftovers = (await inBatches(left, DESKCTL_PARALLELISM, (k) => revokeKey(k.id))).filter(
      Boolean,
    ).length;
  }
  const plans = Array.from({ length: total }, (_, i) => planRequest(runId, i));
  const requestIds: string[] = new Array(total).fill('');
  let revoked = 0;
  try {
    const actors = DEMO_USERS.filter((d) => d.acts);
    await inBatches(actors, DESKCTL_PARALLELISM, async (x) => {
      const key = await deskctl<{ id: string; key: string }>([
        'api-keys',
        'create',
        '--owner',
        demoEmail(x.handle, runId),
        '--name',
        keyName(runId),
        '--scopes',
        x.role === 'admin' ? 'admin' : 'requests:read,requests:write,users:read',
        '--plan',
        'enterprise',
        '--rate-limit',
        String(KEY_LIMIT),
        '--events-rate-limit',
        String(KEY_LIMIT),
        '--expires-in',
        `${KEY_LIFETIME_SECONDS}s`,
      ]);
      keys.set(x.handle, { id: key.id, key: key.key });
    });

    const runStep = async (requestId: string | null, step: Step, index: number): Promise<string> => {
      const key = keys.get(step.as)?.key;
      if (!key) throw new Error(`no seeding key for ${step.as}`);
      if (step.kind === 'create') {
        const data = await api.call<{ id: string }>(
          key,
          'POST',
          '/v1/requests',
          resolveRefs(step.body, userIds, groupIds),
        );
        created.requests += 1;
        return data.id;
      }
      const path = `/v1/requests/${requestId}`;
      if (step.kind === 'patch') {
        await api.call(key, 'PATCH', path, resolveRefs(step.body, userIds, groupIds));
        created.updates += 1;
      } else if (step.kind === 'comment') {
        await api.call(key, 'POST', `${path}/comments`, {
          content: step.content,
          isInternal: step.isInternal,
        });
        created.comments += 1;
      } else {
        const file = demoFile(step.file, index, plans[index].title);
        await api.upload(key, `${path}/attachments`, file.filename, file.content);
        created.attachments += 1;
      }
      return requestId as string;
    };

    let next = 0;
    let failure: unknown = null;
    const worker = async () => {
      while (failure === null && next < plans.length) {
        const plan = plans[next++];
        const done = progress.done[plan.index];
        let requestId = done?.requestId ?? null;
        for (let s = done?.step ?? 0; s < plan.steps.length && failure === null; s++) {
          requestId = await runStep(requestId, plan.steps[s], plan.index);
          // A crash between a write and this record repeats that one write on resume.
          progress.done[plan.index] = { requestId, step: s + 1 };
          await save(progress);
        }
        if (requestId) requestIds[plan.index] = requestId;
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(WORKERS, plans.length) }, () =>
        worker().catch((err) => {
          failure ??= err;
        }),
      ),
    );
    if (failure !== null) {
      const done = requestIds.filter(Boolean).length;
      throw new Error(
        `${(failure as Error).message ?? String(failure)}\nrun "${runId}" is incomplete (${done}/${total} requests finished this time); run the same command again to resume it`,
      );
    }
  } finally {
    revoked = (await inBatches([...keys.values()], DESKCTL_PARALLELISM, (k) => revokeKey(k.id))).filter(
      Boolean,
    ).length;
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
}
