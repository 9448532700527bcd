import type { Role } from '@support-desk/contracts';
import type { Connection, EventContext } from '@support-desk/platform';
import { createApiKey, revokeApiKey } from '../use-cases/api-keys.js';
import type { Deps } from '../use-cases/deps.js';
import { createGroup } from '../use-cases/groups.js';
import { createUser, findUserByEmail } from '../use-cases/users.js';
import { SeedApi } from './seed-api.js';
import { demoFile } from './seed-files.js';
import {
  DEMO_GROUPS,
  DEMO_USERS,
  demoEmail,
  demoGroupName,
  type GroupKey,
  planRequest,
  runTag,
  type Step,
} from './seed-plan.js';
import {
  type SeedRequestDoc,
  type SeedRunDoc,
  seedRequestModel,
  seedRunModel,
  type Totals,
  totalsOf,
} from './seed-store.js';

/**
 * `deskctl seed --demo`: users and groups through identity's own use cases (events with source
 * `cli`), then requests, comments, attachments and status moves through the gateway with
 * temporary API keys of seeded users. Idempotent per run id thanks to markers in identity's
 * database (seedStore.ts): a finished run is never repeated, an interrupted one resumes where it
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
  /** Identity's database, where the run's progress markers live. */
  conn: Connection;
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

/** Groups and users of the run: reused when they exist (a resumed run), created otherwise. */
async function seedIdentity(deps: Deps, ctx: EventContext, runId: string, created: Created) {
  const groupIds = new Map<GroupKey, string>();
  const groups: SeedResult['groups'] = [];
  for (const g of DEMO_GROUPS) {
    const name = demoGroupName(g.name, runId);
    let existing = await deps.groups.findLiveByName(name);
    if (!existing) {
      await createGroup(deps, ctx, { name, description: g.description });
      created.groups += 1;
      existing = await deps.groups.findLiveByName(name);
    }
    if (!existing) throw new Error(`group "${name}" vanished while seeding`);
    groupIds.set(g.key, existing._id);
    groups.push({ id: existing._id, name: existing.name });
  }
  const userIds = new Map<string, string>();
  const users: SeedResult['users'] = [];
  for (const x of DEMO_USERS) {
    const email = demoEmail(x.handle, runId);
    let user = await findUserByEmail(deps, email);
    if (!user) {
      await createUser(deps, ctx, {
        email,
        name: x.name,
        role: x.role,
        isVip: x.isVip,
        groups: x.groups.map((k) => groupIds.get(k) as string),
      });
      created.users += 1;
      user = await findUserByEmail(deps, email);
    }
    if (!user) throw new Error(`user ${email} vanished while seeding`);
    userIds.set(x.handle, user._id);
    users.push({ id: user._id, email: user.email, name: user.name, role: user.role, isVip: user.isVip });
  }
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

export async function seedDemo(deps: Deps, ctx: EventContext, opts: SeedOptions): Promise<SeedResult> {
  const started = Date.now();
  const { conn } = opts;
  const runs = seedRunModel(conn);
  const progressModel = seedRequestModel(conn);
  const { runId } = opts;
  const previous = await runs.findById(runId).lean<SeedRunDoc>();
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
  if (previous) await runs.updateOne({ _id: runId }, { $inc: { attempts: 1 } });
  else
    await runs.updateOne(
      { _id: runId },
      {
        $setOnInsert: {
          status: 'running',
          requests: total,
          startedAt: deps.clock(),
          attempts: 1,
          finishedAt: null,
          summary: null,
        },
      },
      { upsert: true },
    );

  const created = zeroCreated();
  const { groupIds, userIds, groups, users } = await seedIdentity(deps, ctx, runId, created);

  const keys = new Map<string, { id: string; key: string }>();
  const revoke = async () => {
    let revoked = 0;
    for (const k of keys.values()) {
      const r = await revokeApiKey(deps, ctx, k.id).catch(() => null);
      if (r && !r.alreadyRevoked) revoked += 1;
    }
    return revoked;
  };
  // Keys left by an interrupted attempt (killed before it could revoke them) go first.
  const leftover = previous ? await deps.apiKeys.listActiveNamed(keyName(runId)) : [];
  let revokedLeftovers = 0;
  for (const k of leftover) {
    const r = await revokeApiKey(deps, ctx, k._id);
    if (!r.alreadyRevoked) revokedLeftovers += 1;
  }
  const plans = Array.from({ length: total }, (_, i) => planRequest(runId, i));
  const requestIds: string[] = new Array(total).fill('');
  let revoked = 0;
  try {
    for (const x of DEMO_USERS.filter((d) => d.acts)) {
      const key = await createApiKey(deps, ctx, {
        ownerEmail: demoEmail(x.handle, runId),
        name: keyName(runId),
        scopes: x.role === 'admin' ? ['admin'] : ['requests:read', 'requests:write', 'users:read'],
        plan: 'enterprise',
        limits: { general: KEY_LIMIT, events: KEY_LIMIT },
        expiresInSeconds: KEY_LIFETIME_SECONDS,
      });
      keys.set(x.handle, { id: key.id, key: key.key });
    }
    const ids = plans.map((p) => `${runId}:${p.index}`);
    const progress = new Map<number, SeedRequestDoc>();
    for (let i = 0; i < ids.length; i += 500) {
      const docs = await progressModel.find({ _id: { $in: ids.slice(i, i + 500) } }).lean<SeedRequestDoc[]>();
      for (const d of docs) progress.set(d.index, d);
    }

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
        const done = progress.get(plan.index);
        let requestId = done?.requestId ?? null;
        for (let s = done?.step ?? 0; s < plan.steps.length && failure === null; s++) {
          requestId = await runStep(requestId, plan.steps[s], plan.index);
          // A crash between a write and this record repeats that one write on resume.
          await progressModel.updateOne(
            { _id: `${runId}:${plan.index}` },
            { $set: { runId, index: plan.index, requestId, step: s + 1 } },
            { upsert: true },
          );
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
    revoked = await revoke();
  }

  const finishedAt = deps.clock();
  const summary = {
    runId,
    tag: runTag(runId),
    totals: totalsOf(plans),
    users,
    groups,
    requestIds,
    finishedAt: finishedAt.toISOString(),
  };
  await runs.updateOne({ _id: runId }, { $set: { status: 'finished', finishedAt, summary } });
  return {
    ...summary,
    status: previous ? 'resumed' : 'seeded',
    created,
    apiKeys: { created: keys.size, revoked: revoked + revokedLeftovers },
    apiCalls: api.calls,
    seconds: (Date.now() - started) / 1000,
  };
}
