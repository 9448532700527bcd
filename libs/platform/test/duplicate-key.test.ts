import { Schema } from 'mongoose';
import t from 'tap';
import { ensureIndexes, isDuplicateKeyError } from '../src/index.js';
import { testMongo } from '../src/testing/index.js';

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
