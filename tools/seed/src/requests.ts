import type { SeedApi } from './api.js';
import { demoFile } from './files.js';
import type { GroupKey, RequestPlan, Step } from './plan.js';
import type { SeedingKeys } from './keys.js';
import type { Created } from './totals.js';
import type { RunProgress } from './state.js';

/**
 * The requests of a run through the gateway's public API, like any client: each planned request's
 * steps (create, moves, comments, attachments) in order, since each needs the one before, and
 * WORKERS requests at a time.
 */
const WORKERS = 8;

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

export interface RequestsRun {
  api: SeedApi;
  plans: RequestPlan[];
  keys: SeedingKeys;
  userIds: Map<string, string>;
  groupIds: Map<GroupKey, string>;
  progress: RunProgress;
  save: (progress: RunProgress) => Promise<void>;
  created: Created;
  /** Filled in, by plan index, as requests finish. */
  requestIds: string[];
  runId: string;
  /** Told the count of finished requests (those of an earlier attempt included) after each one. */
  progressed?: (finished: number) => void;
}

/** Every planned request's steps, progress saved after every step (a resumed run skips the done ones). */
export async function seedRequests(run: RequestsRun): Promise<void> {
  const { api, plans, keys, userIds, groupIds, progress, save, created, requestIds, runId } = run;
  const total = plans.length;
  let finished = plans.filter((p) => (progress.done[p.index]?.step ?? 0) >= p.steps.length).length;
  run.progressed?.(finished);
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
      if (failure === null && done?.step !== plan.steps.length) run.progressed?.(++finished);
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
}
