import type { Priority, RequestStatus } from '@support-desk/contracts';
import {
  type AggregateDecision,
  type OutboxEntry,
  selectOutbox,
  updateAggregate,
} from '@support-desk/platform';
import type { Connection, FilterQuery } from 'mongoose';
import { type RequestRecord, requestModel } from './requests.js';
import type { SlaState } from './sla-state.js';

/** The soft-delete rule as a query condition, for the queries that select many requests. */
const VISIBLE = { deletedAt: null };
/**
 * The same rule checked on a document read by `_id`: a read by `_id` alone is the one query
 * FerretDB pushes down on every backend (with `deletedAt` in the filter it decodes the whole
 * collection on each call), so single reads and writes check it here.
 */
const isVisible = (doc: Pick<RequestRecord, 'deletedAt'>) => doc.deletedAt == null;

/** A request as read for a change: with its pending outbox, which counts against its size. */
export type RequestForUpdate = RequestRecord & { outbox?: unknown };

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

/** What the SLA monitor reads of a request. */
export type SlaCandidate = Pick<
  RequestRecord,
  '_id' | 'sla' | 'status' | 'firstResponseAt' | 'clockStoppedAt' | 'deletedAt'
>;
const SLA_FIELDS = { _id: 1, sla: 1, status: 1, firstResponseAt: 1, clockStoppedAt: 1 };

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

    async findVisible(id: string): Promise<RequestRecord | null> {
      const doc = await model.findById(id).lean<RequestRecord>().exec();
      return doc && isVisible(doc) ? doc : null;
    },

    /** The visible request with its outbox, to check a change on and then hand to `update`. */
    async findForUpdate(id: string): Promise<RequestForUpdate | null> {
      const doc = await model.findById(id).select(selectOutbox).lean<RequestForUpdate>().exec();
      return doc && isVisible(doc) ? doc : null;
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

    /**
     * Read-decide-write of one visible request (compare-and-set on `rev`; 404, 409 as usual).
     * `current`: the request as just read by `findForUpdate`, decided on without a second read.
     */
    update<R>(
      id: string,
      decide: (current: RequestRecord) => AggregateDecision<R> | Promise<AggregateDecision<R>>,
      current?: RequestForUpdate,
    ) {
      return updateAggregate<RequestRecord, R>(model, id, decide, {
        what: 'Request',
        visible: isVisible,
        maxBytes,
        ...(current ? { current } : {}),
      });
    },

    /**
     * Requests for which an SLA check is due, at most `limit`: ranges on dotted fields, which
     * FerretDB answers by decoding every request (the monitor's full scan, kept rare).
     */
    dueForSla(check: SlaDueCheck, now: Date, limit: number): Promise<SlaCandidate[]> {
      return model.find(dueFilter(check, now), SLA_FIELDS).limit(limit).lean<SlaCandidate[]>().exec();
    },

    /**
     * Requests whose next SLA check falls due in `minute` (`slaDueMinute`), at most `limit`, the
     * deleted ones included (the caller skips them): equality on one top-level field, which
     * FerretDB on PostgreSQL pushes down and MongoDB answers from an index.
     */
    dueInMinute(minute: string, limit: number): Promise<SlaCandidate[]> {
      return model
        .find({ slaDueMinute: minute }, { ...SLA_FIELDS, deletedAt: 1 })
        .limit(limit)
        .lean<SlaCandidate[]>()
        .exec();
    },

    /**
     * Sets an SLA marker, the stored status it implies and the next due minute (`nextDue`, from
     * the request with the marker set), once: a revisioned write like any other, so it can
     * neither be lost to nor erase a concurrent change. A request deleted meanwhile keeps its
     * marker too (it is out of every scan either way).
     */
    markSla(
      id: string,
      marker: SlaDueCheck['marker'],
      status: Partial<Pick<SlaState, 'responseStatus' | 'resolutionStatus'>>,
      at: Date,
      nextDue: (marked: RequestRecord) => string | null,
    ) {
      return updateAggregate<RequestRecord, void>(
        model,
        id,
        (current) => {
          if (current.sla[marker]) return { write: null, result: undefined };
          const sla = { ...current.sla, ...status, [marker]: at };
          return {
            write: {
              set: {
                [`sla.${marker}`]: at,
                ...Object.fromEntries(
                  Object.entries(status).map(([field, value]) => [`sla.${field}`, value]),
                ),
                slaDueMinute: nextDue({ ...current, sla }),
              },
            },
            result: undefined,
          };
        },
        { what: 'Request' },
      );
    },
  };
}

export type RequestsRepository = ReturnType<typeof createRequestsRepository>;
