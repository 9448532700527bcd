import type { Aggregate, Query, Schema } from 'mongoose';
import { callTimedOut, remainingCallMs } from './call-deadline.js';

/**
 * The store's side of a call's deadline (issue 31): every read a model makes while a call is
 * served carries the call's remaining time as `maxTimeMS`, so MongoDB (and FerretDB, which then
 * cancels its PostgreSQL query) stops it when the caller would no longer get the answer. A read
 * asked after the time is up (or after the caller left) is not sent at all. Writes go by `_id`
 * and are short; reads are where a call's cost is. Background work (no call) is unaffected.
 * A query that sets its own `maxTimeMS` keeps the smaller of the two.
 */
const READS = ['find', 'findOne', 'countDocuments', 'distinct', 'estimatedDocumentCount'] as const;

function budgetOf(own: unknown): number | undefined {
  const left = remainingCallMs();
  if (left === undefined) return undefined;
  return typeof own === 'number' && own > 0 ? Math.min(own, left) : left;
}

/** Applied to every model of a service's connection (`connectMongo`). */
export function storeDeadlinePlugin(schema: Schema): void {
  for (const op of READS) {
    schema.pre(op, function (this: Query<unknown, unknown>) {
      const ms = budgetOf(this.getOptions().maxTimeMS);
      if (ms !== undefined) this.maxTimeMS(ms);
    });
  }
  schema.pre('aggregate', function (this: Aggregate<unknown>) {
    const ms = budgetOf(this.options.maxTimeMS);
    if (ms !== undefined) this.options.maxTimeMS = ms;
  });
}

/** MongoDB's and FerretDB's MaxTimeMSExpired: the store stopped a query at its `maxTimeMS`. */
export const isTimeLimitError = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 50;

/** The answer to a read the store stopped at the call's deadline. */
export const storeTimedOut = callTimedOut;
