import { type Connection, mongo } from 'mongoose';
import type { ListQuery } from './index-coverage.js';

/**
 * Whether the local store answers a list query from an index (issue 31), proven with PostgreSQL's
 * own plan of FerretDB's statement: FerretDB's `explain` runs `EXPLAIN` on the SQL it builds for
 * the find (its pushed-down conditions and real values) and hands back PostgreSQL's plan. A query
 * is answered from an index when no node of that plan reads the collection's table in full
 * (`Seq Scan`) and one reads it through an index (the GIN indexes of
 * scripts/infra/postgres-indexes.mjs). On MongoDB the same queries are checked against the
 * declared indexes instead (`coveringIndex`).
 */

interface PlanNode {
  'Node Type'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** What one query's plan does: its node types, and whether FerretDB pushed its filter down. */
export interface BackendPlan {
  query: ListQuery;
  nodes: string[];
  filterPushdown: boolean;
  indexed: boolean;
}

const nodesOf = (node: PlanNode | undefined): string[] =>
  node ? [node['Node Type'] ?? '?', ...(node.Plans ?? []).flatMap(nodesOf)] : [];

/**
 * PostgreSQL's plans of `queries` on `collection` through FerretDB, or null when the store is
 * not FerretDB on PostgreSQL (MongoDB, FerretDB on SQLite: no such plan to read).
 */
export async function backendPlansOf(
  conn: Connection,
  collection: string,
  queries: ListQuery[],
): Promise<BackendPlan[] | null> {
  const db = conn.getClient().db(conn.name);
  const plans: BackendPlan[] = [];
  for (const query of queries) {
    const explained = await db.command({
      explain: {
        find: collection,
        filter: query.filter,
        sort: query.sort,
        // A skip as the driver sends it in a find (FerretDB's explain refuses an int skip).
        ...(query.skip ? { skip: mongo.Long.fromNumber(query.skip) } : {}),
        ...(query.limit ? { limit: query.limit } : {}),
      },
    });
    const plan = (explained.queryPlanner as { Plan?: PlanNode } | undefined)?.Plan;
    if (!explained.serverInfo?.ferretdbVersion || !plan) return null;
    const nodes = nodesOf(plan);
    plans.push({
      query,
      nodes,
      filterPushdown: explained.filterPushdown === true,
      indexed: !nodes.includes('Seq Scan') && nodes.some((n) => /Index/.test(n)),
    });
  }
  return plans;
}

/** The queries of `plans` that read their table in full (described for a failure message). */
const scanned = (plans: BackendPlan[]) =>
  plans
    .filter((p) => !p.indexed)
    .map(
      (p) =>
        `find ${JSON.stringify(p.query.filter)} sort ${JSON.stringify(p.query.sort)}: ${p.nodes.join(' > ')}`,
    );

interface Checks {
  ok(value: unknown, message: string): unknown;
  same(found: unknown, wanted: unknown, message: string): unknown;
  comment(message: string): unknown;
}

/**
 * Asserts that every query of `queries` (more than `atLeast`, cursor pages among them) is read
 * through an index on the local store; only a comment on a store without PostgreSQL plans.
 */
export async function checkIndexedPlans(
  t: Checks,
  conn: Connection,
  collection: string,
  queries: ListQuery[],
  atLeast: number,
) {
  const plans = await backendPlansOf(conn, collection, queries);
  if (!plans) return void t.comment('the store is not FerretDB on PostgreSQL: no PostgreSQL plan to read');
  t.ok(plans.length > atLeast, `${plans.length} plans read`);
  t.ok(
    plans.some((p) => JSON.stringify(p.query.filter).includes('$or')),
    'cursor pages are among them',
  );
  t.same(scanned(plans), [], 'no full read of the table');
}
