import {
  type DeletedRequestItem,
  type DeletedRequestsQuery,
  pageWindow,
  type Principal,
} from '@support-desk/contracts';
import {
  bucketStart,
  buildEvent,
  conflict,
  contextFromPrincipal,
  type CursorScope,
  decodeCursor,
  encodeCursor,
  type EventContext,
  eventEntry,
  FULL_PASS_EVERY_MS,
  HOUR_MS,
  hourKey,
  type PeriodicTask,
  periodicTask,
  revisionAfter,
  systemContext,
  TimeBucketCursor,
  validationError,
} from '@support-desk/platform/core';
import { restoredKeys } from '../store/request-trash.js';
import type { RequestRecord } from '../store/requests.js';
import type { Deps } from './deps.js';
import { requestDetail, withRequestSnapshot } from './queries.js';

/** The trash list's cursors: a position in (deletedAt, id) order, newest first. */
const TRASH_SCOPE: CursorScope = { sort: '-deletedAt', kinds: ['date'], filters: {} };

/** `GET /v1/requests/deleted`: the requests in the trash, newest deletion first. */
export async function listDeletedRequests(deps: Deps, query: DeletedRequestsQuery) {
  const { limit } = pageWindow(1, query.limit);
  const from = query.cursor ? decodeCursor(query.cursor, TRASH_SCOPE) : undefined;
  if (from && from.direction !== 'next')
    throw validationError('query.cursor', 'is not a cursor of the trash');
  const docs = await deps.trash.list(from && { deletedAt: from.keys[0] as Date, id: from.id }, limit + 1);
  const page = docs.slice(0, limit);
  const deleted: DeletedRequestItem[] = page.map((d) => ({
    id: d._id,
    title: d.title,
    status: d.status,
    priority: d.priority,
    requester: d.requester,
    createdAt: d.createdAt.toISOString(),
    deletedAt: d.deletedAt!.toISOString(),
    deletedBy: d.deletedBy ?? null,
    purgeAfter: new Date(d.deletedAt!.getTime() + deps.trashRetentionMs).toISOString(),
    commentCount: d.commentCount,
    attachmentCount: d.attachmentCount,
  }));
  const last = page.at(-1);
  const hasMore = docs.length > limit;
  const nextCursor =
    hasMore && last
      ? encodeCursor(TRASH_SCOPE, { keys: [last.deletedAt!], id: last._id, direction: 'next' })
      : null;
  return { deleted, pagination: { limit, nextCursor, hasMore } };
}

/**
 * `POST /v1/requests/:id/restore`: the request back as it was when deleted (comments and
 * attachments included, their bytes were kept), with `request.restored`. Its `updatedAt` moves,
 * so the changes feed serves it again to mirrors that dropped it.
 */
export async function restoreRequest(
  deps: Deps,
  principal: Principal,
  id: string,
  /** Who restores, as the event records it (the admin RPC: `console` or `cli` as the source). */
  ctx: EventContext = contextFromPrincipal(principal),
) {
  const after = await deps.trash.restore(id, async (current) => {
    if (!current.deletedAt) throw conflict('Request is not deleted');
    const now = deps.clock();
    const event = buildEvent(
      'request.restored',
      id,
      ctx,
      { deletedAt: { from: current.deletedAt.toISOString(), to: null } },
      now,
    );
    const restored = { ...current, ...restoredKeys, updatedAt: now } as RequestRecord;
    const [announced] = await withRequestSnapshot(deps, [event], restored, now);
    return {
      write: { set: { ...restoredKeys, updatedAt: now }, outbox: [eventEntry(deps.names, announced!)] },
      result: { ...restored, rev: revisionAfter(current, true) },
    };
  });
  return requestDetail(deps, principal, after);
}

/** Requests purged per round and rounds per hour (or per full read) in one pass. */
export interface TrashPurgeBounds {
  batch: number;
  maxRounds: number;
}

/** How long a purge's record is kept (it only guards a purge re-run after a crash). */
const PURGE_RECORD_DAYS = 7;

/**
 * Purges one request whose trash period ended: takes it (so a restore can no longer), announces
 * `request.purged` once (a unique insert), removes its attachments' bytes, then its document.
 * Each step is safe to run again: a purge interrupted anywhere is finished by the next pass,
 * which finds the request again by its deletion hour. Returns whether it was purged.
 */
async function purgeOne(deps: Deps, id: string, cutoff: Date): Promise<boolean> {
  const now = deps.clock();
  const taken = await deps.trash.takeForPurge(id, cutoff, now);
  if (!taken) return false;
  const event = buildEvent(
    'request.purged',
    id,
    systemContext(),
    { purgedAt: { from: null, to: now.toISOString() } },
    now,
  );
  await deps.trash.announcePurge({ _id: id, purgedAt: now, hour: hourKey(now) }, [
    eventEntry(deps.names, event),
  ]);
  for (const attachment of taken.attachments) await deps.files.remove(attachment.id);
  await deps.trash.remove(id);
  return true;
}

/**
 * The purge of the trash, every `intervalMs` in each replica (each step is once-only, so replicas
 * may race): the requests deleted longer than the trash period ago, found by the hour of their
 * deletion (`deletedHour`, an equality) since the last pass; in full (by `deletedAt`) at start and
 * daily, which takes in requests deleted before the hour existed.
 */
export function createTrashPurge(
  deps: Deps,
  { intervalMs, batch = 100, maxRounds = 10 }: { intervalMs: number } & Partial<TrashPurgeBounds>,
): PeriodicTask<number> {
  const cursor = new TimeBucketCursor(HOUR_MS, 48, FULL_PASS_EVERY_MS);
  const limit = batch * maxRounds;

  /** Purges what is due in `hour` (all hours: undefined), at most `limit`; how many were. */
  async function purgeDue(
    hour: string | undefined,
    cutoff: Date,
  ): Promise<{ found: number; purged: number }> {
    let found = 0;
    let purged = 0;
    for (let round = 0; round < maxRounds; round++) {
      const ids = await deps.trash.dueForPurge(hour, cutoff, batch);
      found += ids.length;
      for (const id of ids) if (await purgeOne(deps, id, cutoff)) purged++;
      if (ids.length < batch) break;
    }
    return { found, purged };
  }

  async function pass(): Promise<number> {
    const now = deps.clock();
    const cutoff = new Date(now.getTime() - deps.trashRetentionMs);
    const at = cutoff.getTime();
    const current = bucketStart(at, HOUR_MS);
    const plan = cursor.plan(at, current);
    let purged = 0;
    if (plan.full) {
      const done = await purgeDue(undefined, cutoff);
      purged += done.purged;
      if (done.found < limit) cursor.fullDone(at, current - HOUR_MS);
    } else {
      for (const hour of plan.buckets) {
        const done = await purgeDue(hourKey(hour), cutoff);
        purged += done.purged;
        if (done.found >= limit) break;
        if (hour < current) cursor.bucketDone(hour);
      }
    }
    await deps.trash.expirePurgeRecords(new Date(now.getTime() - PURGE_RECORD_DAYS * 24 * HOUR_MS), {
      batch,
      maxRounds,
    });
    if (purged > 0) deps.logger.info({ purged, cutoff }, 'trash purge removed requests for good');
    return purged;
  }

  return periodicTask({ name: 'trash purge', intervalMs, logger: deps.logger, run: pass, onError: 0 });
}

/** Batches of the trash-key back-fill at start, and how many at most one start runs. */
const BACKFILL_BATCH = 100;
const BACKFILL_BATCHES_MAX = 1000;

/**
 * Gives requests deleted before the trash existed its keys at start, so they are listed and
 * restorable (their period counts from their deletion). Logged, never fatal.
 */
export async function completeTrashKeys(deps: Deps): Promise<void> {
  try {
    let completed = 0;
    for (let batch = 0; batch < BACKFILL_BATCHES_MAX; batch++) {
      const n = await deps.trash.completeTrashKeys(BACKFILL_BATCH);
      completed += n;
      if (n < BACKFILL_BATCH) break;
    }
    if (completed > 0) deps.logger.info({ completed }, 'deleted requests given their trash keys');
  } catch (err) {
    deps.logger.warn({ err }, 'giving deleted requests their trash keys failed; retried at the next start');
  }
}
