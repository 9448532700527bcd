import { Schema } from 'mongoose';
import t from 'tap';
import { connectMongo, ensureIndexes } from '../src/subpaths/service.js';
import { isDuplicateKeyError } from '../src/subpaths/core.js';
import { testEnv, testMongo, uniqueName } from '../src/testing/index.js';

// Against the store in use: each FerretDB backend words a unique violation on update its own way
// (code 1 "UNIQUE constraint failed" on SQLite, "… SQLSTATE 23505" on PostgreSQL; 11000 on MongoDB).
t.test('isDuplicateKeyError recognises unique violations on insert and on update', async (t) => {
  const conn = await testMongo(t, 'dupkey');
  const Person = conn.model(
    'Person',
    new Schema({ _id: String, key: { type: String, unique: true }, n: Number }, { versionKey: false }),
  );
  await ensureIndexes(conn);
  await Person.create([
    { _id: 'p1', key: 'a' },
    { _id: 'p2', key: 'b' },
  ]);
  // The error a write fails with (or what it returned, which is no duplicate-key error).
  const failure = async (write: () => Promise<unknown>) => write().catch((err: unknown) => err);

  t.ok(
    isDuplicateKeyError(await failure(() => Person.create({ _id: 'p3', key: 'a' }))),
    'insert, unique key',
  );
  t.ok(isDuplicateKeyError(await failure(() => Person.create({ _id: 'p1', key: 'z' }))), 'insert, same _id');
  t.ok(
    isDuplicateKeyError(await failure(() => Person.updateOne({ _id: 'p2' }, { $set: { key: 'a' } }))),
    'updateOne to a taken key',
  );
  t.ok(
    isDuplicateKeyError(await failure(() => Person.findOneAndUpdate({ _id: 'p2' }, { $set: { key: 'a' } }))),
    'findOneAndUpdate to a taken key',
  );
  t.equal((await Person.findById('p2').lean())?.key, 'b', 'the refused update changed nothing');
  t.notOk(isDuplicateKeyError(new Error('something else')), 'other errors are not');
  t.notOk(
    isDuplicateKeyError(Object.assign(new Error('exploded'), { code: 1 })),
    'nor other internal errors',
  );
});

t.test("MONGO_URL carries a replica set's write settings: w=majority and retryable writes", async (t) => {
  const url = new URL(testEnv.mongoUrl);
  url.search = '?w=majority&retryWrites=true&wtimeoutMS=5000';
  const conn = await connectMongo({ url: url.toString(), dbName: uniqueName('wc_') });
  t.teardown(async () => {
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  });
  t.equal(conn.db?.writeConcern?.w, 'majority', 'the write concern of the URL, not overridden');
  t.equal(conn.getClient().options.retryWrites, true);
  const writes = conn.db!.collection('probe');
  t.equal((await writes.insertOne({ n: 1 })).acknowledged, true, 'the store accepts the write concern');
  t.equal((await writes.updateOne({ n: 1 }, { $set: { m: 2 } })).modifiedCount, 1);
});
