import type { Priority } from '@support-desk/contracts';
import {
  AppError,
  type AggregateDecision,
  dayKey,
  hourKey,
  type OutboxEntry,
} from '@support-desk/platform/core';
import {
  besideSeek,
  completeDerivedFields,
  createListTotals,
  hourWalk,
  type HourWalkReads,
  type HourWalkStep,
  insertWithOutbox,
  isTimeLimitError,
  keysetQuery,
  rangeWithin,
  readsByValue,
  selectOutbox,
  timedSpans,
  updateAggregate,
  totalKeyOf,
  walkWithKeptTotal,
} from '@support-desk/platform/store';
import type { Connection, FilterQuery } from 'mongoose';
import { requestOrders, type RequestSort, requestWalks } from './request-order.js';
import {
  CHANGE_ORDER,
  type ChangePosition,
  LIST_FIELDS,
  listQuery,
  type RequestListFilter,
  type RequestListWindow,
  VISIBLE,
} from './request-queries.js';
import { PRIORITY_RANK, type RequestRecord, requestModel } from './requests.js';
import type { SlaState } from './sla-state.js';

/**
 * The same rule checked on a document read by `_id`: a read by `_id` alone is the one query
 * FerretDB pushes down on every backend (with `deletedAt` in the filter it decodes the whole
 * collection on each call), so single reads and writes check it here.
 */
const isVisible = (doc: Pick<RequestRecord, 'deletedAt'>) => doc.deletedAt == null;

/** A request as read for a change: with its pending outbox, which counts against its size. */
export type { ChangePosition, RequestListFilter, RequestListWindow };

export type RequestForUpdate = RequestRecord & { outbox?: unknown };

/** The keys a request keeps beside its fields so the lists can sort and filter on them. */
const derivedKeys = (r: Pick<RequestRecord, 'priority' | 'requester' | 'createdAt' | 'updatedAt'>) => ({
  priorityRank: PRIORITY_RANK[r.priority],
  requesterId: r.requester.id,
  createdHour: hourKey(r.createdAt),
  createdDay: dayKey(r.createdAt),
  updatedHour: hourKey(r.updatedAt),
  updatedDay: dayKey(r.updatedAt),
});

/**
 * The hours and days a list call reads at most (`walkHours`): a day of hours and then three months
 * of days, each an index lookup that finds nothing when the hour or day holds no match. Past them
 * the call answers what it found and a cursor to where it stopped (docs/api-guide.md, "Overload").
 */
const LIST_STEPS_PER_CALL = 120;

/** With `priority` in a write, its rank too (the order `sort=priority` reads); with `updatedAt`, its hour. */
function withDerivedKeys<R>(decision: AggregateDecision<R>): AggregateDecision<R> {
  const set = decision.write?.set;
  if (!decision.write || !set || (!set.priority && !set.updatedAt)) return decision;
  const priority = set.priority as Priority | undefined;
  const updatedAt = set.updatedAt as Date | undefined;
  return {
    ...decision,
    write: {
      ...decision.write,
      set: {
        ...set,
        ...(priority ? { priorityRank: PRIORITY_RANK[priority] } : {}),
        ...(updatedAt ? { updatedHour: hourKey(updatedAt), updatedDay: dayKey(updatedAt) } : {}),
      },
    },
  };
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

/** The condition under which an SLA check is due as of `now`. */
function dueFilter(check: SlaDueCheck, now: Date): FilterQuery<RequestRecord> {
  // A paused clock is due for nothing (`sla.pausedSince`, absent on requests stored before it).
  const running =
    check.clock === 'response'
      ? { firstResponseAt: null, 'sla.pausedSince': null }
      : { clockStoppedAt: null, status: { $nin: ['resolved', 'closed'] }, 'sla.pausedSince': null };
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
export function createRequestsRepository(
  conn: Connection,
  { maxBytes, totalsTtlMs = 0 }: { maxBytes?: number; totalsTtlMs?: number } = {},
) {
  const model = requestModel(conn);
  const bounds = timedSpans(conn, model, 'requests');
  /** Capped page-mode counts, kept per filter (`createListTotals`). */
  const totals = createListTotals(totalsTtlMs);
  /**
   * What every write of a request adds before it lands: the keys derived from what it sets and the
   * list bounds widened to its change time (the trash's restore writes through it too).
   */
  const prepareWrite = async <R>(decided: AggregateDecision<R>): Promise<AggregateDecision<R>> => {
    const decision = withDerivedKeys(decided);
    const updatedAt = decision.write?.set?.updatedAt as Date | undefined;
    if (updatedAt) await bounds.stored(undefined, updatedAt);
    return decision;
  };
  return {
    prepareWrite,
    /** A new request with the events that announce it, in one insert. */
    async insert(record: RequestRecord, outbox: OutboxEntry[]): Promise<void> {
      await bounds.stored(record.createdAt, record.updatedAt);
      await insertWithOutbox(model, { ...record, ...derivedKeys(record) }, outbox);
    },

    /** The list bounds of the requests stored before they were kept (at start). */
    ensureListBounds: () => Promise.all([bounds.read('createdAt'), bounds.read('updatedAt')]),

    async findVisible(id: string): Promise<RequestRecord | null> {
      const doc = await model.findById(id).lean<RequestRecord>().exec();
      return doc && isVisible(doc) ? doc : null;
    },

    /** The visible request with its outbox, to check a change on and then hand to `update`. */
    async findForUpdate(id: string): Promise<RequestForUpdate | null> {
      const doc = await model.findById(id).select(selectOutbox).lean<RequestForUpdate>().exec();
      return doc && isVisible(doc) ? doc : null;
    },

    /**
     * A page of visible requests in `sort` order (by skip, or after a keyset position), and in
     * page mode the total matching (counted up to the cap), read an hour or a day at a time
     * (`hourWalk`): the filter with that hour's or day's equality, never the whole collection.
     * `stoppedAt`: the call read its `LIST_STEPS_PER_CALL` before the page was full and the list
     * ended.
     */
    async list(filter: RequestListFilter, sort: RequestSort, window: RequestListWindow) {
      const query = listQuery(filter);
      const { sort: order, condition } = keysetQuery(requestOrders.keys(sort), window.seek);
      const walk = requestWalks[sort.field];
      const known = await bounds.read(walk.time as 'createdAt' | 'updatedAt');
      if (!known) return { docs: [] as RequestRecord[], total: 0 };
      // Every request was changed at or after its creation: `createdAfter` bounds both walks.
      const span = {
        oldest: Math.max(known.oldest, filter.createdAfter?.getTime() ?? 0),
        newest: Math.min(
          known.newest,
          (walk.time === 'createdAt' && filter.createdBefore?.getTime()) || Infinity,
        ),
      };
      const steps = hourWalk(walk, order[walk.time] === 1, span, window.seek?.values);
      const inStep = (step: HourWalkStep, q: FilterQuery<RequestRecord>): FilterQuery<RequestRecord> => ({
        ...q,
        ...step.where,
        [walk.time]: rangeWithin(q[walk.time], step.from, step.to),
      });
      // A search reads for its time budget, then answers what it found and where it stopped.
      const until = window.maxTimeMs ? Date.now() + window.maxTimeMs : undefined;
      const timed = <Q extends { maxTimeMS(ms: number): Q }>(q: Q) =>
        until ? q.maxTimeMS(Math.max(1, until - Date.now())) : q;
      const readsOf = (q: FilterQuery<RequestRecord>): HourWalkReads<RequestRecord> => ({
        find: (step, skip, limit) =>
          timed(model.find(besideSeek(inStep(step, q), condition), LIST_FIELDS).sort(order))
            .skip(skip)
            .limit(limit)
            .lean<RequestRecord[]>()
            .exec(),
        count: (step, limit) => timed(model.countDocuments(inStep(step, q), { limit })).exec(),
      });
      // Several statuses (or else priorities): an equality each, which the local store pushes down.
      const split = (['status', 'priority'] as const).find((f) => (filter[f]?.length ?? 0) > 1);
      const reads = split
        ? readsByValue(filter[split]!, order, (value: string) => readsOf({ ...query, [split]: value }))
        : readsOf(query);
      try {
        return await walkWithKeptTotal(totals, totalKeyOf(filter), steps, window, reads, {
          maxSteps: LIST_STEPS_PER_CALL,
          until,
          stopsAt: until ? isTimeLimitError : undefined,
        });
      } catch (err) {
        // A search's first hour past its whole budget; a list stopped at its call's deadline is
        // the platform's 503.
        if (window.maxTimeMs && isTimeLimitError(err))
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            `The search took longer than ${window.maxTimeMs} ms: narrow it with more filters`,
          );
        throw err;
      }
    },

    /**
     * The requests changed after `after` (every one from the start without it) up to `until`,
     * in change order, at most `limit`, the deleted ones included (tombstones): ranges on
     * `updatedAt`, which MongoDB answers from the index and FerretDB by reading every request.
     */
    changes(after: ChangePosition | undefined, until: Date, limit: number): Promise<RequestRecord[]> {
      const seek = after ? { values: [after.at, after.id], direction: 'next' as const } : undefined;
      const { sort, condition } = keysetQuery(CHANGE_ORDER, seek);
      const settled = { updatedAt: { $lte: until } };
      return model
        .find(condition ? { $and: [settled, condition] } : settled)
        .sort(sort)
        .limit(limit)
        .lean<RequestRecord[]>()
        .exec();
    },

    /**
     * Gives requests stored before a derived key existed (`priorityRank`, `requesterId`) the
     * missing ones, at most `limit` a call (each a revisioned write, so it cannot erase a
     * concurrent change); how many were completed. `updatedAt` stays: the request did not change
     * for its readers.
     */
    async completeDerivedKeys(limit: number): Promise<number> {
      const incomplete = [
        'priorityRank',
        'requesterId',
        'createdHour',
        'createdDay',
        'updatedHour',
        'updatedDay',
      ].map((k) => ({ [k]: null }));
      return completeDerivedFields(model, { $or: incomplete }, limit, derivedKeys, 'Request');
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
      return updateAggregate<RequestRecord, R>(model, id, async (doc) => prepareWrite(await decide(doc)), {
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
