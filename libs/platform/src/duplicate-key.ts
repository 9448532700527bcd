// What a store's unique index answers, told apart without its driver: a use case that turns a
// duplicate into a 409 needs it, and the core must not load mongoose.

/**
 * True for E11000 duplicate-key errors (insert or update). FerretDB v1 reports a unique index
 * violation on *update* (updateOne, findOneAndUpdate, replaceOne) as InternalError (code 1) with
 * its backend's message: "UNIQUE constraint failed" on SQLite, "duplicate key value violates unique
 * constraint … (SQLSTATE 23505)" on PostgreSQL; both are recognised too.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  const e = err as { code?: number; message?: string; writeErrors?: { code?: number }[] } | null;
  if (e?.code === 11000 || (e?.writeErrors?.every((w) => w.code === 11000) ?? false)) return true;
  return e?.code === 1 && /UNIQUE constraint failed|SQLSTATE 23505/.test(String(e.message ?? ''));
}
