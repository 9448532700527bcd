import type { Priority, RequestStatus } from '@support-desk/contracts';
import { type AggregateDecision, type OutboxEntry, updateAggregate } from '@support-desk/platform';
import type { Connection, FilterQuery } from 'mongoose';
import { type RequestRecord, requestModel } from './requests.js';
import type { SlaState } from './sla-state.js';

/** The soft-delete rule, written once: every read and write of the API sees only these. */
const VISIBLE = { deletedAt: null };

/** The list's filters, each optional (already validated). */
export interface RequestListFilter {
  status?: RequestStatus;
  priority?: Priority;
  assignedTo?: string;
  assignedGroup?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** One SLA check the monitor makes: which clock, warning or breach, and its exactly-once marker. */
export interface SlaDueCheck {
  clock: 'response' | 'resolution';
  kind: 'warning' | 'breach';
  marker: 'responseWarnedAt' | 'responseBreachedAt' | 'resolutionWarnedAt' | 'resolutionBreachedAt';
}

const LIST_FIELDS = {
  title: 1,
  description: 1,
  status: 1,
  priority: 1,
  category: 1,
  createdAt: 1,
  updatedAt: 1,
  assignedTo: 1,
  assignedGroup: 1,
  requester: 1,
};

/** The condition under which an SLA check is due as of `now`. */
function dueFilter(check: SlaDueCheck, now: Date): FilterQuery<RequestRecord> {
  const running =
    check.clock === 'response'
      ? { firstResponseAt: null }
      : { clockStoppedAt: null, status: { $nin: ['resolved', 'closed'] } };
  const moment = check.kind === 'breach' ? `sla.${check.clock}Target` : `sla.${check.clock}WarnAt`;
  const filter: FilterQuery<RequestRecord> = {
    ...VISIBLE,
    ...running,
    [moment]: { $lte: now },
    [`sla.${check.marker}`]: null,
  };
  // A warning is only due inside its window (between the threshold and the target).
  if (check.kind === 'warning') filter[`sla.${check.clock}Target`] = { $gt: now };
  return filter;
}

/** Support requests: every query of the aggregate, its indexes and the soft-delete rule. */
export function createRequestsRepository(conn: Connection, { maxBytes }: { maxBytes?: number } = {}) {
  const model = requestModel(conn);
  return {
    /** A new request with the events that announce it, in one insert. */
    async insert(record: RequestRecord, outbox: OutboxEntry[]): Promise<void> {
      await model.create({ ...record, outbox });
    },

    findVisible(id: string): Promise<RequestRecord | null> {
      return model
        .findOne({ _id: id, ...VISIBLE })
        .lean<RequestRecord>()
        .exec();
    },

    /** A page of visible requests, newest first, with the total matching. */
    async list(filter: RequestListFilter, page: { skip: number; limit: number }) {
      const query: FilterQuery<RequestRecord> = { ...VISIBLE };
      if (filter.status) query.status = filter.status;
      if (filter.priority) query.priority = filter.priority;
      if (filter.assignedTo) query.assignedTo = filter.assignedTo;
      if (filter.assignedGroup) query.assignedGroup = filter.assignedGroup;
      if (filter.createdAfter || filter.createdBefore) {
        query.createdAt = {
          ...(filter.createdAfter ? { $gte: filter.createdAfter } : {}),
          ...(filter.createdBefore ? { $lt: filter.createdBefore } : {}),
        };
      }
      const [docs, total] = await Promise.all([
        model
          .find(query, LIST_FIELDS)
          .sort({ createdAt: -1, _id: -1 })
          .skip(page.skip)
          .limit(page.limit)
          .lean<RequestRecord[]>(),
        model.countDocuments(query),
      ]);
      return { docs, total };
    },

    /** The visible request that holds an attachment (its metadata lives in the request). */
    findHoldingAttachment(attachmentId: string): Promise<Pick<RequestRecord, '_id' | 'attachments'> | null> {
      return model
        .findOne({ 'attachments.id': attachmentId, ...VISIBLE }, { attachments: 1 })
        .lean<Pick<RequestRecord, '_id' | 'attachments'>>()
        .exec();
    },

    /** Read-decide-write of one visible request (compare-and-set on `rev`; 404, 409 as usual). */
    update<R>(
      id: string,
      decide: (current: RequestRecord) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
    ) {
      return updateAggregate<RequestRecord, R>(model, id, decide, {
        what: 'Request',
        filter: VISIBLE,
        maxBytes,
      });
    },

    /** Requests for which an SLA check is due, at most `limit`. */
    dueForSla(check: SlaDueCheck, now: Date, limit: number): Promise<Pick<RequestRecord, '_id' | 'sla'>[]> {
      return model
        .find(dueFilter(check, now), { _id: 1, sla: 1 })
        .limit(limit)
        .lean<Pick<RequestRecord, '_id' | 'sla'>[]>()
        .exec();
    },

    /**
     * Sets an SLA marker and the stored status it implies, once: a revisioned write like any
     * other, so it can neither be lost to nor erase a concurrent change. A request deleted
     * meanwhile keeps its marker too (it is out of every scan either way).
     */
    markSla(
      id: string,
      marker: SlaDueCheck['marker'],
      status: Partial<Pick<SlaState, 'responseStatus' | 'resolutionStatus'>>,
      at: Date,
    ) {
      return updateAggregate<RequestRecord, void>(
        model,
        id,
        (current) => ({
          write: current.sla[marker]
            ? null
            : {
                set: {
                  [`sla.${marker}`]: at,
                  ...Object.fromEntries(
                    Object.entries(status).map(([field, value]) => [`sla.${field}`, value]),
                  ),
                },
              },
          result: undefined,
        }),
        { what: 'Request' },
      );
    },
  };
}

export type RequestsRepository = ReturnType<typeof createRequestsRepository>;
