import type { BulkAction, ErrorBody, Principal, UpdateRequestBody } from '@support-desk/contracts';
import { hourKey, isDuplicateKeyError } from '@support-desk/platform/core';
import { type PurgeBounds, purgeByDueHour, updateAggregate } from '@support-desk/platform/store';
import type { Static } from 'typebox';
import { type Connection, type Model, Schema } from 'mongoose';
import { requestModel } from './requests.js';

/**
 * Bulk jobs (issue 38). A job document holds what to do (the action, the changes, the items and
 * the principal that asked, so every item is decided as that caller's single call would be); one
 * result document per item (`_id` = `<job>:<index>`) records its outcome. Exactly one effect per
 * item: the item's write to its request carries the item's key (`bulkMarks`, in the same atomic
 * write as the change and its events), so a worker that lost its memory (a SIGKILL between the
 * write and the result) finds the key on the request and records the success without writing
 * again; the result itself is a unique insert (atomic on both stores), so it is recorded once.
 */
interface BulkJobItem {
  id: string;
  ifMatch?: string;
}

export interface BulkJobRecord {
  _id: string;
  action: BulkAction;
  changes: UpdateRequestBody | null;
  items: BulkJobItem[];
  principal: Principal;
  status: 'running' | 'completed';
  createdAt: Date;
  completedAt: Date | null;
  /** When a completed job and its results are deleted (`BULK_JOB_RETENTION_DAYS` after it ended). */
  expiresAt?: Date | null;
  /** The hour of `expiresAt` (`hourKey`): the purge reads expired jobs hour by hour. */
  expiresHour?: string | null;
  /** The worker that holds the job, until when (another process takes it over after that). */
  leaseOwner: string | null;
  leaseUntil: Date | null;
  rev: number;
}

export interface BulkJobResultRecord {
  _id: string;
  jobId: string;
  index: number;
  requestId: string;
  ok: boolean;
  httpStatus: number;
  error: Static<typeof ErrorBody> | null;
  at: Date;
}

const JobSchema = new Schema<BulkJobRecord>(
  {
    _id: { type: String, required: true },
    action: { type: String, required: true },
    changes: { type: Schema.Types.Mixed, default: null },
    items: { type: [{ _id: false, id: String, ifMatch: String }], required: true },
    principal: { type: Schema.Types.Mixed, required: true },
    status: { type: String, required: true, index: true },
    createdAt: { type: Date, required: true },
    completedAt: { type: Date, default: null },
    expiresAt: { type: Date, default: null },
    expiresHour: { type: String, default: null, index: true },
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Date, default: null },
    rev: { type: Number, required: true, default: 0 },
  },
  { collection: 'bulk_jobs', versionKey: false, minimize: false },
);

const ResultSchema = new Schema<BulkJobResultRecord>(
  {
    _id: { type: String, required: true },
    jobId: { type: String, required: true },
    index: { type: Number, required: true },
    requestId: { type: String, required: true },
    ok: { type: Boolean, required: true },
    httpStatus: { type: Number, required: true },
    error: { type: Schema.Types.Mixed, default: null },
    at: { type: Date, required: true },
  },
  { collection: 'bulk_job_results', versionKey: false },
);
// A job's results in item order; `jobId` is the equality every read of them selects by.
ResultSchema.index({ jobId: 1, index: 1 });

const jobModel = (conn: Connection) =>
  (conn.models.BulkJob as Model<BulkJobRecord>) ?? conn.model<BulkJobRecord>('BulkJob', JobSchema);
const resultModel = (conn: Connection) =>
  (conn.models.BulkJobResult as Model<BulkJobResultRecord>) ??
  conn.model<BulkJobResultRecord>('BulkJobResult', ResultSchema);

/** The key an item's write leaves on its request. */
export const itemKey = (jobId: string, index: number) => `${jobId}:${index}`;
/** How many item keys a request keeps (the newest): far more than jobs can race on one request. */
export const BULK_MARKS_KEPT = 20;

export function createBulkJobsRepository(conn: Connection) {
  const jobs = jobModel(conn);
  const results = resultModel(conn);
  const requests = requestModel(conn);
  const purgeExpiredJobs = purgeByDueHour(jobs, 'expiresHour', (cutoff: Date) => ({
    status: 'completed',
    expiresAt: { $lte: cutoff },
  }));
  return {
    async insert(job: BulkJobRecord): Promise<void> {
      await jobs.collection.insertOne(job as never);
    },

    find: (id: string) => jobs.findById(id).lean<BulkJobRecord>().exec(),

    /** Ids of the jobs not completed (an equality on `status`, pushed down), at most `limit`. */
    async running(limit: number): Promise<string[]> {
      const docs = await jobs.find({ status: 'running' }, { _id: 1 }).limit(limit).lean<{ _id: string }[]>();
      return docs.map((d) => d._id);
    },

    /**
     * Takes (or renews) the job's lease for `owner` until `until`, a revisioned write: null when the
     * job is completed or another live owner holds it.
     */
    async lease(id: string, owner: string, now: Date, until: Date): Promise<BulkJobRecord | null> {
      return updateAggregate<BulkJobRecord, BulkJobRecord | null>(
        jobs,
        id,
        (job) => {
          const heldByOther = job.leaseOwner !== owner && job.leaseUntil != null && job.leaseUntil > now;
          if (job.status !== 'running' || heldByOther) return { write: null, result: null };
          return { write: { set: { leaseOwner: owner, leaseUntil: until } }, result: job };
        },
        { what: 'Job' },
      );
    },

    async complete(id: string, now: Date, expiresAt: Date): Promise<void> {
      const set = {
        status: 'completed',
        completedAt: now,
        expiresAt,
        expiresHour: hourKey(expiresAt.getTime()),
        leaseOwner: null,
        leaseUntil: null,
      };
      await updateAggregate<BulkJobRecord, void>(
        jobs,
        id,
        (job) => ({ write: job.status === 'running' ? { set } : null, result: undefined }),
        { what: 'Job' },
      );
    },

    /**
     * Deletes the completed jobs expired by `cutoff`, each one's results first (an equality on
     * `jobId`, at most the job's 1,000 items), read by expiry hour. Returns how many jobs went.
     */
    purgeExpired: (cutoff: Date, bounds: Omit<PurgeBounds, 'beforeDelete'>) =>
      purgeExpiredJobs(cutoff, {
        ...bounds,
        beforeDelete: async (ids) => {
          for (const jobId of ids) await results.deleteMany({ jobId: jobId as string });
        },
      }),

    /** The indexes of the job's items that have a result. */
    async doneIndexes(jobId: string): Promise<Set<number>> {
      const docs = await results.find({ jobId }, { index: 1 }).lean<{ index: number }[]>();
      return new Set(docs.map((d) => d.index));
    },

    /** Records an item's result once (false: it was recorded before). */
    async record(result: BulkJobResultRecord): Promise<boolean> {
      try {
        await results.collection.insertOne(result as never);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Whether the item's write landed on its request (its key is there, deleted or not). */
    async landed(requestId: string, key: string): Promise<boolean> {
      const doc = await requests
        .findById(requestId, { bulkMarks: 1 })
        .lean<{ bulkMarks?: string[] }>()
        .exec();
      return doc?.bulkMarks?.includes(key) ?? false;
    },

    /** Counts of the job's results (all, failed): equalities on `jobId` (pushed down). */
    async counts(jobId: string): Promise<{ processed: number; failed: number }> {
      const [processed, failed] = await Promise.all([
        results.countDocuments({ jobId }),
        results.countDocuments({ jobId, ok: false }),
      ]);
      return { processed, failed };
    },

    /** A page of the job's results in item order. */
    page: (jobId: string, skip: number, limit: number) =>
      results.find({ jobId }).sort({ index: 1 }).skip(skip).limit(limit).lean<BulkJobResultRecord[]>().exec(),
  };
}

export type BulkJobsRepository = ReturnType<typeof createBulkJobsRepository>;
