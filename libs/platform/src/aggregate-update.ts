import type { Model } from 'mongoose';
import { conflict, notFound } from './errors.js';
import { type OutboxEntry, pushOutbox } from './outbox.js';

/** The field every aggregate carries as its concurrency token, bumped by each update. */
export const REVISION_FIELD = 'rev';

/** Optimistic writes retry this many times on a concurrent change before answering 409. */
export const AGGREGATE_WRITE_ATTEMPTS = 5;

/** One change to an aggregate, in domain terms (no database operators). */
export interface AggregateWrite {
  /** Fields to set; a dotted path sets a field of a sub-document (`'sla.breachedAt'`). */
  set?: Record<string, unknown>;
  /** Elements appended, in order, to array fields (`{ comments: [comment] }`). */
  append?: Record<string, unknown[]>;
  /** Messages that leave with this write: events and notices, published by the outbox relay. */
  outbox?: OutboxEntry[];
}

/**
 * What a use case decides from the current state: the write to make (null: nothing changes, no
 * write, no event) and the value to return to its caller once the write has landed.
 */
export interface AggregateDecision<R> {
  write: AggregateWrite | null;
  result: R;
}

export interface UpdateAggregateOptions {
  /** The aggregate's name in messages ("Request" → "Request not found"). */
  what: string;
  /** Conditions the document must also meet (e.g. not soft-deleted); else it is not found. */
  filter?: Record<string, unknown>;
  attempts?: number;
}

type Stored = { _id: unknown; [REVISION_FIELD]?: number };

/**
 * Reads one aggregate, lets `decide` plan a change from it, and writes that change with
 * compare-and-set on the revision: the write lands only if nobody changed the aggregate since the
 * read, bumps the revision, and appends the outbox entries in the same single-document write.
 * A lost race reads again and decides again, up to `attempts` times, then answers 409. So the
 * events describe exactly the change that was made, and no concurrent writer is overwritten.
 */
export async function updateAggregate<T extends Stored, R>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any aggregate model
  model: Model<any>,
  id: T['_id'],
  decide: (current: T) => Promise<AggregateDecision<R>> | AggregateDecision<R>,
  { what, filter = {}, attempts = AGGREGATE_WRITE_ATTEMPTS }: UpdateAggregateOptions,
): Promise<R> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const current = await model.findOne({ ...filter, _id: id }).lean<T>();
    if (!current) throw notFound(what);
    const { write, result } = await decide(current);
    if (!write) return result;
    const revision = current[REVISION_FIELD];
    // Documents written before the revision existed have none; their first update starts it.
    const unchanged = revision === undefined ? { $exists: false } : revision;
    const landed = await model.updateOne(
      { ...filter, _id: id, [REVISION_FIELD]: unchanged },
      aggregateUpdateDocument(write),
    );
    if (landed.modifiedCount === 1) return result;
  }
  throw conflict(`The ${what.toLowerCase()} was changed concurrently; retry`);
}

/** The MongoDB update for one aggregate write (the revision is always bumped). */
export function aggregateUpdateDocument(write: AggregateWrite): Record<string, unknown> {
  const push: Record<string, unknown> = {};
  for (const [field, items] of Object.entries(write.append ?? {})) push[field] = { $each: items };
  if (write.outbox && write.outbox.length > 0) Object.assign(push, pushOutbox(write.outbox));
  return {
    ...(write.set && Object.keys(write.set).length > 0 ? { $set: write.set } : {}),
    $inc: { [REVISION_FIELD]: 1 },
    ...(Object.keys(push).length > 0 ? { $push: push } : {}),
  };
}
