import { randomBytes } from 'node:crypto';
import {
  type BulkJobQuery,
  type BulkJobView,
  type BulkRequestsBody,
  hasScope,
  newId,
  pageWindow,
  paginate,
  type Principal,
} from '@support-desk/contracts';
import {
  AppError,
  forbidden,
  ifMatchRevisions,
  notFound,
  type PeriodicTask,
  periodicTask,
  validationError,
} from '@support-desk/platform/core';
import { type BulkJobRecord, type BulkJobResultRecord, itemKey } from '../store/bulk-jobs.js';
import type { Deps } from './deps.js';
import { deleteRequest, updateRequest } from './requests.js';

/** The job as both answers show it (without its results). */
async function jobSummary(deps: Deps, job: BulkJobRecord) {
  const { processed, failed } = await deps.bulk.store.counts(job._id);
  return {
    id: job._id,
    action: job.action,
    status: job.status,
    total: job.items.length,
    processed,
    succeeded: processed - failed,
    failed,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt?.toISOString() ?? null,
  };
}

/** `POST /v1/requests/bulk`: checks what applies to the whole job, stores it, wakes the worker. */
export async function createBulkJob(deps: Deps, principal: Principal, body: BulkRequestsBody) {
  if (body.action === 'delete') {
    if (body.changes !== undefined)
      throw validationError('body.changes', 'is not accepted with action delete');
    // The scope of `DELETE /v1/requests/:id`: every item would be refused alike.
    if (!hasScope(principal.scopes, 'admin')) throw forbidden('This operation requires the admin scope');
  } else if (!body.changes || Object.keys(body.changes).length === 0) {
    throw validationError(
      'body.changes',
      'is required with action update and must change at least one field',
    );
  }
  const seen = new Set<string>();
  for (const [index, item] of body.items.entries()) {
    if (seen.has(item.id))
      throw validationError(`body.items.${index}.id`, `request ${item.id} appears more than once`);
    seen.add(item.id);
  }
  const now = deps.clock();
  const job: BulkJobRecord = {
    _id: newId('job', now.getTime()),
    action: body.action,
    changes: body.changes ?? null,
    items: body.items.map((i) => (i.ifMatch ? { id: i.id, ifMatch: i.ifMatch } : { id: i.id })),
    principal,
    status: 'running',
    createdAt: now,
    completedAt: null,
    leaseOwner: null,
    leaseUntil: null,
    rev: 0,
  };
  await deps.bulk.store.insert(job);
  deps.bulk.wake();
  return jobSummary(deps, job);
}

/** `GET /v1/jobs/:id`: progress and a page of results; the job's owner's and admins' only. */
export async function getBulkJob(
  deps: Deps,
  principal: Principal,
  id: string,
  query: BulkJobQuery,
): Promise<BulkJobView> {
  const job = await deps.bulk.store.find(id);
  if (!job || (job.principal.userId !== principal.userId && principal.role !== 'admin'))
    throw notFound('Job');
  const window = pageWindow(query.page, query.limit);
  const [summary, page] = await Promise.all([
    jobSummary(deps, job),
    deps.bulk.store.page(id, window.skip, window.limit),
  ]);
  return {
    ...summary,
    results: page.map((r) => ({
      index: r.index,
      id: r.requestId,
      status: r.ok ? ('succeeded' as const) : ('failed' as const),
      httpStatus: r.httpStatus,
      error: r.error,
    })),
    pagination: paginate(window, summary.processed),
  };
}

type ItemOutcome = Pick<BulkJobResultRecord, 'ok' | 'httpStatus' | 'error'> | 'retry';

/**
 * One item, as its single call: the same use case with the job's principal, plus the item's key
 * in the write. A refusal is the item's result (the envelope's error); a 503 (identity cannot be
 * asked now) is retried by a later pass, as a client would retry the single call.
 */
async function runItem(deps: Deps, job: BulkJobRecord, index: number): Promise<ItemOutcome> {
  const item = job.items[index]!;
  const key = itemKey(job._id, index);
  const ifMatch = ifMatchRevisions(item.ifMatch);
  const succeeded = { ok: true, httpStatus: 200, error: null };
  try {
    if (job.action === 'delete') {
      // A deleted request is out of `update`'s reach: its key is looked for first.
      if (await deps.bulk.store.landed(item.id, key)) return succeeded;
      await deleteRequest(deps, job.principal, item.id, ifMatch, key);
    } else {
      await updateRequest(deps, job.principal, item.id, job.changes!, ifMatch, key);
    }
    return succeeded;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'SERVICE_UNAVAILABLE') return 'retry';
    // Another worker's write of this very item may have landed meanwhile.
    if (await deps.bulk.store.landed(item.id, key)) return succeeded;
    const error = { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
    return { ok: false, httpStatus: err.statusCode, error };
  }
}

export interface BulkWorkerOptions {
  /** Time between passes (a new job in this process wakes one at once). */
  pollMs: number;
  /** How long a worker holds a job without renewing; another process takes it over after that. */
  leaseMs: number;
  /** Jobs looked at per pass. */
  jobsPerPass?: number;
}

/**
 * The bulk worker of this process: each pass takes the running jobs (a lease on each, renewed
 * while it works, so one process at a time works a job and a dead one's job is taken over once
 * its lease ends), and gives every item without a result its result, in order. A job survives
 * anything: its state is the job and result documents, never this process's memory.
 */
export function createBulkWorker(deps: Deps, options: BulkWorkerOptions): PeriodicTask<number> {
  const owner = randomBytes(8).toString('hex');
  const store = deps.bulk.store;
  // Set while the process shuts down: the pass stops between items, the next process resumes.
  let stopping = false;

  /** Works one job while it holds its lease; how many items it gave a result. */
  async function work(id: string): Promise<number> {
    const leaseUntil = () => new Date(deps.clock().getTime() + options.leaseMs);
    let job = await store.lease(id, owner, deps.clock(), leaseUntil());
    if (!job) return 0;
    let renewAt = deps.clock().getTime() + options.leaseMs / 2;
    const done = await store.doneIndexes(id);
    let recorded = 0;
    for (let index = 0; index < job.items.length; index++) {
      if (done.has(index)) continue;
      if (stopping) return recorded;
      if (deps.clock().getTime() >= renewAt) {
        job = await store.lease(id, owner, deps.clock(), leaseUntil());
        if (!job) return recorded;
        renewAt = deps.clock().getTime() + options.leaseMs / 2;
      }
      const outcome = await runItem(deps, job, index);
      if (outcome === 'retry') return recorded;
      const result = {
        _id: itemKey(id, index),
        jobId: id,
        index,
        requestId: job.items[index]!.id,
        ...outcome,
      };
      if (await store.record({ ...result, at: deps.clock() })) recorded++;
    }
    const completedAt = deps.clock();
    await store.complete(id, completedAt, new Date(completedAt.getTime() + deps.bulk.retentionMs));
    deps.logger.info({ job: id, total: job.items.length }, 'bulk job completed');
    return recorded;
  }

  const task = periodicTask({
    name: 'bulk jobs',
    intervalMs: options.pollMs,
    logger: deps.logger,
    onError: 0,
    async run() {
      let recorded = 0;
      for (const id of await store.running(options.jobsPerPass ?? 20)) recorded += await work(id);
      return recorded;
    },
  });
  return {
    ...task,
    async stop() {
      stopping = true;
      await task.stop();
      stopping = false;
    },
  };
}

/**
 * Deletes the completed jobs whose retention ended, and their results (at most 1,000 jobs a pass;
 * the next pass goes on). Every replica runs it: deleting what another replica deletes too is safe.
 */
export function createBulkJobsPurge(
  deps: Deps,
  { intervalMs }: { intervalMs: number },
): PeriodicTask<number> {
  return periodicTask({
    name: 'bulk jobs purge',
    intervalMs,
    logger: deps.logger,
    onError: 0,
    run: async () => {
      const purged = await deps.bulk.store.purgeExpired(deps.clock(), { batch: 100, maxRounds: 10 });
      if (purged > 0) deps.logger.info({ purged }, 'bulk jobs past their retention deleted');
      return purged;
    },
  });
}
