/**
 * `npm run bench -- --script=bench:store requests`: the store's own cost of the requests
 * collection's operations, without the service: the collection and its indexes as the service
 * makes them, then inserts, reads by `_id`, by-`_id` updates and a two-field list query, 8 at a
 * time, and the store's CPU per operation (FerretDB and PostgreSQL with every backend, or mongod:
 * `processMeter`). What it compares is the local store's index set
 * (scripts/infra/postgres-indexes.mjs), so the collection is large enough for write bursts to show.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectMongo } from '@support-desk/platform/service';
import { processMeter, testEnv, uniqueName } from '@support-desk/platform/testing';
import { requestModel } from '../src/store/requests.js';

const COUNT = Number(process.env.BENCH_STORE_DOCUMENTS ?? 15_000);
const LISTS = 300;
const WORKERS = 8;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const STORE = ['ferretdb', 'postgres', 'mongod'];
const meter = processMeter(ROOT);

/** CPU ticks (1/100 s) of the store's processes, PostgreSQL's backends included. */
function storeTicks(): number {
  const { ticks } = meter.read();
  return STORE.reduce((sum, group) => sum + (ticks.get(group) ?? 0), 0);
}

// The store of the environment (MONGO_URL, as `npm run bench` sets it).
const conn = await connectMongo({ url: testEnv.mongoUrl, dbName: uniqueName('requests_store_bench_') });
const collection = requestModel(conn);
await collection.createIndexes();
const docs = collection.collection;

const STATUSES = ['open', 'pending', 'solved'];
const at = new Date();
/** A stored request: a quarter with long descriptions, each holding one pending entry. */
const request = (i: number) => ({
  _id: `req_bench${i}`,
  title: `Stored request ${i}`,
  description: 'x'.repeat(i % 4 === 0 ? 3000 : 60),
  status: STATUSES[i % 3],
  priority: ['low', 'medium', 'high'][i % 3],
  priorityRank: i % 3,
  tags: ['bench'],
  assignedTo: null,
  assignedGroup: null,
  requesterId: `usr_bench${i % 50}`,
  deletedAt: null,
  createdAt: at,
  updatedAt: at,
  rev: 0,
  outbox: [{ id: `evt_bench${i}`, subject: 'bench', payload: 'p'.repeat(800), createdAt: at }],
});

async function phase(name: string, count: number, op: (i: number) => Promise<unknown>) {
  const before = storeTicks();
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < count) await op(next++);
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  return { perSecond: Math.round(count / seconds), storeCpuMs: ((storeTicks() - before) * 10) / count };
}

// Printed only: `npm run bench`'s table reads the requests workspace's results as run.ts's.
const figures = {
  insert: await phase('insert', COUNT, (i) => docs.insertOne(request(i) as never)),
  readById: await phase('read', COUNT, (i) => docs.findOne({ _id: `req_bench${(i * 7) % COUNT}` } as never)),
  updateById: await phase('update', COUNT, (i) =>
    docs.updateOne({ _id: `req_bench${(i * 13) % COUNT}` } as never, { $set: { title: `Renamed ${i}` } }),
  ),
  listByTwoFields: await phase('list', LISTS, (i) =>
    docs.find({ status: STATUSES[i % 3], priority: 'high' } as never, { limit: 20 }).toArray(),
  ),
};
await conn.dropDatabase();
await conn.close();

console.log(`\nthe requests collection's store operations (${COUNT} documents, ${WORKERS} at a time)`);
for (const [name, f] of Object.entries(figures))
  console.log(
    `${name.padEnd(16)} ${String(f.perSecond).padStart(6)}/s   store CPU ${f.storeCpuMs.toFixed(2)} ms each`,
  );
