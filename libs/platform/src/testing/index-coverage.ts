import type { Connection } from 'mongoose';
import { commandsOf } from './round-trips.js';

/**
 * Whether MongoDB can answer a list query from an index (issue 31): the queries a repository
 * really builds (taken from the driver's command monitoring while the test calls every list
 * variant) against the indexes its schema declares. A query is covered when one index starts with
 * some of the query's equality fields (an `$in` counts: MongoDB merges its branches) and goes on
 * with the sort's fields in the sort's order (all in the index's direction, or all reversed): the
 * plan is then an index scan that needs no sort in memory, and stops at the page's limit. A query
 * without a sort needs an index whose first field is one of its equalities or ranges. This is
 * the rule MongoDB's planner follows (equality, sort, range); `explain` cannot run here (the local
 * store is FerretDB), so the test asserts the rule on the real queries instead.
 */

export type IndexKeys = Record<string, 1 | -1 | string>;
export interface ListQuery {
  filter: Record<string, unknown>;
  sort: Record<string, 1 | -1>;
  /** The page's window as sent (for an `explain` of the same statement). */
  skip?: number;
  limit?: number;
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !(v instanceof Date) &&
  !Array.isArray(v) &&
  Object.keys(v).some((k) => k.startsWith('$'));

/** The fields a filter selects by equality (`$in` included) and by range. */
function selection(filter: Record<string, unknown>, eq = new Set<string>(), range = new Set<string>()) {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and') for (const part of value as Record<string, unknown>[]) selection(part, eq, range);
    else if (key.startsWith('$'))
      continue; // `$or` (a search, a keyset position): checked on what the index finds
    else if (!isOperatorObject(value)) eq.add(key);
    else if ('$in' in value || '$eq' in value) eq.add(key);
    else if (['$gt', '$gte', '$lt', '$lte'].some((op) => op in value)) range.add(key);
  }
  return { eq, range };
}

/** The first index of `indexes` that answers `query` without a collection scan or a sort in memory. */
export function coveringIndex(query: ListQuery, indexes: IndexKeys[]): IndexKeys | undefined {
  const { eq, range } = selection(query.filter);
  const sort = Object.entries(query.sort);
  return indexes.find((index) => {
    const keys = Object.entries(index);
    let i = 0;
    while (i < keys.length && eq.has(keys[i]![0])) i++;
    if (sort.length === 0) return i > 0 || (keys.length > 0 && range.has(keys[0]![0]));
    // Sort fields the query pins by equality need no place in the index.
    const ordered = sort.filter(([field]) => !eq.has(field) || query.filter[field] === undefined);
    const rest = keys.slice(i, i + ordered.length);
    if (rest.length < ordered.length) return false;
    const same = ordered.every(([f, d], n) => rest[n]![0] === f && rest[n]![1] === d);
    const reversed = ordered.every(([f, d], n) => rest[n]![0] === f && rest[n]![1] === -d);
    return same || reversed;
  });
}

/** The indexes a model declares, with the `_id` index every collection has. */
export const declaredIndexes = (schema: { indexes(): [IndexKeys, unknown][] }): IndexKeys[] => [
  { _id: 1 },
  ...schema.indexes().map(([keys]) => keys),
];

/** A command's sort as an object in key order (the driver sends a `Map` for a sort given as pairs). */
const sortOf = (sort: unknown): Record<string, 1 | -1> =>
  sort instanceof Map
    ? (Object.fromEntries(sort) as Record<string, 1 | -1>)
    : ((sort ?? {}) as Record<string, 1 | -1>);

/**
 * Every `find` (filter and sort) sent on `collection` while `operation` ran, through a connection
 * from `testCountedMongo`. (A page's total is a count of the same filter without the sort, capped
 * at 1,000 matches: docs/api-guide.md, "Overload".)
 */
export async function listQueriesOf(
  conn: Connection,
  collection: string,
  operation: () => Promise<unknown>,
): Promise<ListQuery[]> {
  const { commands } = await commandsOf(conn, operation);
  return commands
    .filter((c) => c.name === 'find' && c.command.find === collection)
    .map(({ command }) => ({
      filter: (command.filter ?? {}) as Record<string, unknown>,
      sort: sortOf(command.sort),
      ...(typeof command.skip === 'number' ? { skip: command.skip } : {}),
      ...(typeof command.limit === 'number' ? { limit: command.limit } : {}),
    }));
}

/** The queries of `queries` no index answers (described for a failure message). */
export const uncovered = (queries: ListQuery[], indexes: IndexKeys[]) =>
  queries
    .filter((q) => !coveringIndex(q, indexes))
    .map((q) => `find ${JSON.stringify(q.filter)} sort ${JSON.stringify(q.sort)}`);
