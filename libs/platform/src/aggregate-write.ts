import type { OutboxEntry } from './outbox-entry.js';

// What a use case hands the store (aggregate-update.ts) for one aggregate, without a database word.

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
