import { pgQuery } from '@support-desk/platform/launch';
import t from 'tap';
import { sharedPostgres, testMongo } from '../src/testing/index.js';

// The local store's index set (scripts/infra/postgres-indexes.mjs), seen from both sides: what
// FerretDB says through the MongoDB protocol, and what PostgreSQL holds and plans with.
const shared = sharedPostgres();

t.test(
  "FerretDB's btree indexes are parked off the collection's table, its GIN indexes keep no pending list",
  { skip: shared ? false : 'the store is not FerretDB on PostgreSQL' },
  async (t) => {
    const sql = (text: string) => pgQuery(shared!, text);
    const conn = await testMongo(t, 'parked');
    const schema = conn.db!.databaseName;
    const things = conn.db!.collection('things');
    await things.insertOne({ _id: 'a', status: 'open', priority: 'high', email: 'a@example.com' } as never);
    await things.createIndex({ status: 1, priority: 1 }, { name: 'by_status' });
    await things.createIndex({ email: 1 }, { name: 'by_email', unique: true });

    /** Indexes of a table of the schema: name, access method, options, and the comment. */
    const indexesOf = async (table: string) =>
      (
        await sql(
          `SELECT c.relname, a.amname, coalesce(array_to_string(c.reloptions, ','), ''),
                  coalesce(obj_description(c.oid, 'pg_class'), '')
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
           WHERE i.indrelid = to_regclass('${schema}.${table}') ORDER BY c.relname`,
        )
      ).map(([name, method, options, comment]) => ({ name: name!, method, options, comment }));
    const [[table]] = await sql(
      `SELECT tablename FROM pg_tables WHERE schemaname = '${schema}' AND tablename LIKE 'things\\_%'`,
    );
    const onTable = await indexesOf(table!);
    const parked = await indexesOf('sd_parked_indexes');

    t.same(
      onTable.filter((ix) => ix.method === 'btree').map((ix) => ix.name.replace(/_[0-9a-f]{8}_idx$/, '')),
      [`${table}__id_`, `${table}_by_email`].sort(),
      "the collection's table keeps the unique btree indexes only (they enforce)",
    );
    const gin = onTable.filter((ix) => ix.method === 'gin');
    t.equal(gin.length, 4, 'a GIN index for _id, status, priority and email');
    t.ok(
      gin.every((ix) => ix.options === 'fastupdate=off'),
      'no GIN index keeps a pending list',
    );
    t.equal(parked.length, 1, 'the non-unique btree index is parked');
    t.match(parked[0], { method: 'btree', comment: table }, "named for its collection's table");
    t.match(
      parked[0]!.name,
      /^things_[0-9a-f]+_by_status_[0-9a-f]{8}_idx$/,
      'under the name FerretDB gave it',
    );

    t.same(
      (await things.indexes()).map((ix) => ix.name).sort(),
      ['_id_', 'by_email', 'by_status'],
      'FerretDB lists every index it made',
    );
    t.same(
      await things.find({ status: 'open', priority: 'high' }).toArray(),
      [{ _id: 'a', status: 'open', priority: 'high', email: 'a@example.com' }],
      'and answers through the GIN indexes',
    );

    await things.dropIndex('by_status');
    t.same(await indexesOf('sd_parked_indexes'), [], 'FerretDB drops a parked index by its name');
    t.same((await things.indexes()).map((ix) => ix.name).sort(), ['_id_', 'by_email']);

    await things.createIndex({ status: 1, priority: 1 }, { name: 'by_status' });
    t.equal((await indexesOf('sd_parked_indexes')).length, 1, 'made again: parked again');
    await things.drop();
    t.same(await indexesOf('sd_parked_indexes'), [], 'a dropped collection takes its parked indexes along');
    const again = conn.db!.collection('things');
    await again.insertOne({ _id: 'b', status: 'open' } as never);
    await again.createIndex({ status: 1, priority: 1 }, { name: 'by_status' });
    t.same(
      (await again.indexes()).map((ix) => ix.name).sort(),
      ['_id_', 'by_status'],
      'a collection of the same name makes the same index names again',
    );
  },
);
