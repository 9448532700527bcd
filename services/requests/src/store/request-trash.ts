import {
  AppError,
  type AggregateDecision,
  hourKey,
  isDuplicateKeyError,
  type OutboxEntry,
} from '@support-desk/platform/core';
import {
  insertWithOutbox,
  keysetQuery,
  outboxPlugin,
  purgeByDueHour,
  updateAggregate,
} from '@support-desk/platform/store';
import { type Connection, type FilterQuery, type Model, Schema } from 'mongoose';
import { type RequestRecord, requestModel } from './requests.js';

/**
 * The trash (issue 38): a deleted request stays whole (comments, attachment metadata, GridFS
 * bytes) and restorable until its period ends, then a purge removes it for good. Every query here
 * selects by a top-level scalar equality (`inTrash: true`, `deletedHour: <hour>`), which FerretDB
 * on PostgreSQL pushes down and MongoDB answers from an index: the cost follows the trash, never
 * the whole store. Only the purge's slow full pass (at start and daily) reads by range.
 */

/** The keys a deletion writes beside `deletedAt`; `deletedHour` is what the purge reads by. */
export const trashKeys = (deletedAt: Date) => ({ inTrash: true, deletedHour: hourKey(deletedAt) });
/** What a restore writes: out of the trash, visible again. */
export const restoredKeys = { deletedAt: null, deletedBy: null, inTrash: null, deletedHour: null };

/** A request in the trash, as its list shows it. */
export type TrashedRequest = Pick<
  RequestRecord,
  '_id' | 'title' | 'status' | 'priority' | 'requester' | 'createdAt' | 'deletedAt' | 'deletedBy'
> & { commentCount: number; attachmentCount: number };

/** The order of the trash list: newest deletion first, ties by id. */
const TRASH_ORDER = [
  { field: 'deletedAt', descending: true },
  { field: '_id', descending: true },
] as const;

/** A position in the trash list: after this deletion. */
export interface TrashPosition {
  deletedAt: Date;
  id: string;
}

/**
 * One document per purged request (`_id` = the request id), carrying `request.purged` in its
 * outbox: inserting it is the exactly-once announcement, whatever the replicas or a purge
 * interrupted and run again (a unique insert is atomic on MongoDB and FerretDB alike). It keeps
 * nothing of the request's content, and is itself removed by due hour after a while.
 */
export interface PurgeRecord {
  _id: string;
  purgedAt: Date;
  /** The hour (`hourKey`) of `purgedAt`: the record's own clean-up reads by it. */
  hour: string;
}

const PurgeSchema = new Schema<PurgeRecord>(
  {
    _id: { type: String, required: true },
    purgedAt: { type: Date, required: true },
    hour: { type: String, required: true, index: true },
  },
  { collection: 'request_purges', versionKey: false },
);
outboxPlugin(PurgeSchema);

type PurgeModel = Model<PurgeRecord>;

export function purgeRecordModel(conn: Connection): PurgeModel {
  return (conn.models.RequestPurge as PurgeModel) ?? conn.model<PurgeRecord>('RequestPurge', PurgeSchema);
}

/** A restore or purge may take a request only while a purge has not taken it. */
const notPurging = (doc: Pick<RequestRecord, 'purgingAt'>) => doc.purgingAt == null;

/**
 * `prepareWrite`: the requests repository's own (derived keys, list bounds), so a restored
 * request's new `updatedAt` is where the lists sorted by it look.
 */
export function createRequestTrash(
  conn: Connection,
  prepareWrite: <R>(decision: AggregateDecision<R>) => Promise<AggregateDecision<R>>,
) {
  const model = requestModel(conn);
  const purges = purgeRecordModel(conn);
  return {
    /**
     * A page of the trash after `after`, at most `limit`: the equality `inTrash: true` selects
     * (pushed down), the sort by deletion runs on what it selects (the trash, not the store).
     */
    async list(after: TrashPosition | undefined, limit: number): Promise<TrashedRequest[]> {
      const seek = after ? { values: [after.deletedAt, after.id], direction: 'next' as const } : undefined;
      const { sort, condition } = keysetQuery(TRASH_ORDER, seek);
      const filter: FilterQuery<RequestRecord> = { inTrash: true, ...(condition ?? {}) };
      const docs = await model
        .find(filter, {
          _id: 1,
          title: 1,
          status: 1,
          priority: 1,
          requester: 1,
          createdAt: 1,
          deletedAt: 1,
          deletedBy: 1,
          purgingAt: 1,
          'comments.id': 1,
          'attachments.id': 1,
        })
        .sort(sort)
        .limit(limit)
        .lean<(RequestRecord & { purgingAt?: Date | null })[]>()
        .exec();
      return docs
        .filter((d) => d.deletedAt != null)
        .map(({ comments, attachments, ...d }) => ({
          ...d,
          commentCount: comments?.length ?? 0,
          attachmentCount: attachments?.length ?? 0,
        }));
    },

    /**
     * Read-decide-write of a request a purge has not taken (deleted or not: `decide` tells them
     * apart), compare-and-set on `rev` like every other write; 404 when absent or being purged.
     */
    restore<R>(
      id: string,
      decide: (current: RequestRecord) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ) {
      return updateAggregate<RequestRecord, R>(model, id, async (doc) => prepareWrite(await decide(doc)), {
        what: 'Request',
        visible: notPurging,
      });
    },

    /**
     * Ids of deleted requests whose trash period ended by `cutoff`, at most `limit`: those deleted
     * in `hour` (an equality, pushed down), or, without an hour, all of them (a range on
     * `deletedAt`: a full read, the slow pass that catches what no hour covers).
     */
    async dueForPurge(hour: string | undefined, cutoff: Date, limit: number): Promise<string[]> {
      const due: FilterQuery<RequestRecord> = hour
        ? { deletedHour: hour, deletedAt: { $lte: cutoff } }
        : { deletedAt: { $lte: cutoff } };
      const docs = await model.find(due, { _id: 1 }).limit(limit).lean<{ _id: string }[]>().exec();
      return docs.map((d) => d._id);
    },

    /**
     * Takes a request for the purge if it is still deleted and due by `cutoff` (a revisioned write,
     * so a restore racing it either lands first, and the purge leaves it, or finds it taken and
     * answers 404). Returns the request taken (a purge interrupted before took it already), or
     * null when it is no longer to be purged.
     */
    async takeForPurge(id: string, cutoff: Date, now: Date): Promise<RequestRecord | null> {
      try {
        return await updateAggregate<RequestRecord, RequestRecord | null>(
          model,
          id,
          (current) => {
            if (!current.deletedAt || current.deletedAt > cutoff) return { write: null, result: null };
            if (current.purgingAt) return { write: null, result: current };
            return { write: { set: { purgingAt: now, inTrash: null } }, result: current };
          },
          { what: 'Request' },
        );
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
        throw err;
      }
    },

    /** Announces a purge once (false: it was announced before, by this or another replica). */
    async announcePurge(record: PurgeRecord, outbox: OutboxEntry[]): Promise<boolean> {
      try {
        await insertWithOutbox(purges, record, outbox);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Removes the request's document for good (its files are removed first, by the caller). */
    async remove(id: string): Promise<void> {
      await model.deleteOne({ _id: id });
    },

    /**
     * Gives requests deleted before the trash existed their trash keys, at most `limit` a call
     * (revisioned writes; `updatedAt` stays): a range, read at start only. How many were given.
     */
    async completeTrashKeys(limit: number): Promise<number> {
      const missing = await model
        .find({ deletedAt: { $ne: null }, deletedHour: null, purgingAt: null }, { _id: 1 })
        .limit(limit)
        .lean<{ _id: string }[]>()
        .exec();
      for (const { _id } of missing) {
        await updateAggregate<RequestRecord, void>(
          model,
          _id,
          (current) => ({
            write: current.deletedAt && !current.deletedHour ? { set: trashKeys(current.deletedAt) } : null,
            result: undefined,
          }),
          { what: 'Request' },
        );
      }
      return missing.length;
    },

    /**
     * Removes the purge records of purges older than the cutoff a pass is given (by due hour, the
     * platform's `purgeByDueHour`): they are needed only while a purge could still be re-run.
     */
    expirePurgeRecords: purgeByDueHour(purges, 'hour', (cutoff) => ({ purgedAt: { $lt: cutoff } })),
  };
}

export type RequestTrash = ReturnType<typeof createRequestTrash>;
