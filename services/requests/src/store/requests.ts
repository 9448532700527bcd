import type { Priority, RequestStatus } from '@support-desk/contracts';
import { outboxPlugin } from '@support-desk/platform/store';
import { type Connection, type Model, Schema } from 'mongoose';
import type { SlaState } from './sla-state.js';

interface PersonSnapshot {
  id: string;
  email: string;
  name: string;
}

export interface CommentRecord {
  id: string;
  content: string;
  authorId: string;
  authorName: string;
  isInternal: boolean;
  createdAt: Date;
}

export interface AttachmentRecord {
  id: string;
  filename: string;
  size: number;
  contentType: string;
  uploadedAt: Date;
  uploadedBy: string;
}

/** One support request: the aggregate. Comments and attachment metadata live inside it. */
export interface RequestRecord {
  _id: string;
  title: string;
  description: string;
  status: RequestStatus;
  priority: Priority;
  /**
   * The priority's severity (`PRIORITY_RANK`), kept beside it so `sort=priority` orders by
   * severity with a plain sort; set by the repository on every write of `priority`.
   */
  priorityRank?: number;
  category: string | null;
  tags: string[];
  /** Snapshot from the principal at creation; names shown follow the users read model. */
  requester: PersonSnapshot;
  /**
   * `requester.id` again, top-level: the list's `requester` filter is an equality on it, which
   * FerretDB on PostgreSQL pushes down (a dotted path it does not); set by the repository.
   */
  requesterId?: string;
  assignedTo: string | null;
  assignedGroup: string | null;
  resolution: string | null;
  resolvedAt: Date | null;
  firstResponseAt: Date | null;
  /** When the resolution clock stopped (resolved or closed); null while it runs. */
  clockStoppedAt: Date | null;
  comments: CommentRecord[];
  attachments: AttachmentRecord[];
  sla: SlaState;
  /**
   * The minute (`minuteKey`, UTC) in which the next SLA check falls due; null when none is
   * pending. Set with every change to the SLA state; the monitor looks requests up by it.
   */
  slaDueMinute: string | null;
  deletedAt: Date | null;
  deletedBy: string | null;
  /**
   * The trash (request-trash.ts): `true` while deleted and restorable, the equality the trash list
   * reads by; `deletedHour` the hour (`hourKey`) of `deletedAt`, by which the purge finds what its
   * period ended for; `purgingAt` once a purge took the request (it can no longer be restored).
   */
  inTrash?: boolean | null;
  deletedHour?: string | null;
  purgingAt?: Date | null;
  /** The keys of the newest bulk-job items that wrote this request (store/bulk-jobs.ts). */
  bulkMarks?: string[];
  createdAt: Date;
  updatedAt: Date;
  /**
   * The hours and days (`hourKey`, `dayKey`, UTC) of `createdAt` and `updatedAt`: the lists read
   * one hour or day at a time by equality on them (`hourWalk`), so no list call reads the whole
   * collection on the local store. Set by the repository with every write of the times.
   */
  createdHour?: string;
  createdDay?: string;
  updatedHour?: string;
  updatedDay?: string;
  /** Optimistic concurrency: every write is conditioned on it and increments it. */
  rev: number;
}

const CommentSchema = new Schema<CommentRecord>(
  {
    id: { type: String, required: true },
    content: { type: String, required: true },
    authorId: { type: String, required: true },
    authorName: { type: String, required: true },
    isInternal: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
  },
  { _id: false },
);

const AttachmentSchema = new Schema<AttachmentRecord>(
  {
    id: { type: String, required: true },
    filename: { type: String, required: true },
    size: { type: Number, required: true },
    contentType: { type: String, required: true },
    uploadedAt: { type: Date, required: true },
    uploadedBy: { type: String, required: true },
  },
  { _id: false },
);

const SlaSchema = new Schema<SlaState>(
  {
    tier: { type: String, required: true },
    vip: { type: Boolean, required: true },
    // Absent on requests stored before SLA policies: read through `currentSla` (use-cases/sla.ts).
    policyId: { type: String, default: null },
    calendar: { type: Schema.Types.Mixed },
    pauseStatuses: { type: [String], default: undefined },
    responseGoalMs: { type: Number },
    resolutionGoalMs: { type: Number },
    responseUsedMs: { type: Number },
    resolutionUsedMs: { type: Number },
    countedAt: { type: Date },
    pausedSince: { type: Date, default: null },
    responseTarget: { type: Date, required: true },
    responseWarnAt: { type: Date, required: true },
    resolutionTarget: { type: Date, required: true },
    resolutionWarnAt: { type: Date, required: true },
    responseStatus: { type: String, required: true },
    resolutionStatus: { type: String, required: true },
    responseWarnedAt: { type: Date, default: null },
    responseBreachedAt: { type: Date, default: null },
    resolutionWarnedAt: { type: Date, default: null },
    resolutionBreachedAt: { type: Date, default: null },
    pausedMs: { type: Number },
  },
  { _id: false },
);

const RequestSchema = new Schema<RequestRecord>(
  {
    _id: { type: String, required: true },
    title: { type: String, required: true },
    description: { type: String, required: true },
    status: { type: String, required: true },
    priority: { type: String, required: true },
    priorityRank: { type: Number },
    category: { type: String, default: null },
    tags: { type: [String], default: [] },
    requester: {
      id: { type: String, required: true },
      email: { type: String, required: true },
      name: { type: String, required: true },
    },
    requesterId: { type: String },
    assignedTo: { type: String, default: null },
    assignedGroup: { type: String, default: null },
    resolution: { type: String, default: null },
    resolvedAt: { type: Date, default: null },
    firstResponseAt: { type: Date, default: null },
    clockStoppedAt: { type: Date, default: null },
    comments: { type: [CommentSchema], default: [] },
    attachments: { type: [AttachmentSchema], default: [] },
    sla: { type: SlaSchema, required: true },
    slaDueMinute: { type: String, default: null },
    deletedAt: { type: Date, default: null },
    deletedBy: { type: String, default: null },
    inTrash: { type: Boolean },
    deletedHour: { type: String },
    purgingAt: { type: Date },
    bulkMarks: { type: [String], default: undefined },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    createdHour: { type: String },
    createdDay: { type: String },
    updatedHour: { type: String },
    updatedDay: { type: String },
    rev: { type: Number, required: true, default: 0 },
  },
  { collection: 'requests', versionKey: false, minimize: false },
);
outboxPlugin(RequestSchema);

// The list: every filter combined with the newest-first sort (deletedAt first: every query has it).
RequestSchema.index({ deletedAt: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, status: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, priority: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, assignedTo: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, assignedGroup: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, requesterId: 1, createdAt: -1, _id: -1 });
// Multikey: `tags=x` is an equality on an element of the array.
RequestSchema.index({ deletedAt: 1, tags: 1, createdAt: -1, _id: -1 });
// The other orders of the list (`sort`), and the changes feed (every request, deleted ones too).
RequestSchema.index({ deletedAt: 1, updatedAt: -1, _id: -1 });
RequestSchema.index({ deletedAt: 1, priorityRank: -1, createdAt: -1, _id: -1 });
RequestSchema.index({ updatedAt: 1, _id: 1 });
// One hour or day of the list (`hourWalk`): the equalities the local store pushes down (their GIN
// indexes come from these) and, on MongoDB, one hour or day in list order when no filter applies.
RequestSchema.index({ createdHour: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ createdDay: 1, createdAt: -1, _id: -1 });
RequestSchema.index({ updatedHour: 1, updatedAt: -1, _id: -1 });
RequestSchema.index({ updatedDay: 1, updatedAt: -1, _id: -1 });
// The SLA monitor: requests due in a minute, and its full scans (due moments).
RequestSchema.index({ slaDueMinute: 1 });
RequestSchema.index({ 'sla.responseWarnAt': 1 });
RequestSchema.index({ 'sla.responseTarget': 1 });
RequestSchema.index({ 'sla.resolutionWarnAt': 1 });
RequestSchema.index({ 'sla.resolutionTarget': 1 });
// The trash: its list (newest deletion first) and the purge by hour of deletion.
RequestSchema.index({ inTrash: 1, deletedAt: -1, _id: -1 });
RequestSchema.index({ deletedHour: 1 });

/** Severity order of the priorities: `sort=priority` goes from low (1) to critical (4). */
export const PRIORITY_RANK: Record<Priority, number> = { low: 1, medium: 2, high: 3, critical: 4 };

type RequestModel = Model<RequestRecord>;

export function requestModel(conn: Connection): RequestModel {
  return (
    (conn.models.SupportRequest as RequestModel) ?? conn.model<RequestRecord>('SupportRequest', RequestSchema)
  );
}
