// Bulk updates go to the store in commands of at most eight statements (bulk-updates.ts): FerretDB
// 1.24 holds a pooled connection per statement of an `update` command, and one of 60 never ends.
import { inUpdateChunks, MAX_UPDATES_PER_COMMAND } from '@support-desk/platform/store';
import { roundTripCounter, testCountedMongo } from '@support-desk/platform/testing';
import t from 'tap';

t.test('twenty updates: three update commands of at most eight, every document written', async (t) => {
  const conn = await testCountedMongo(t, 'bulk');
  const docs = conn.collection<{ _id: string; v: number }>('docs');
  await docs.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: `d${i}`, v: 0 })));
  const ops = Array.from({ length: 20 }, (_, i) => ({
    updateOne: { filter: { _id: `d${i}` }, update: { $set: { v: i + 1 } } },
  }));
  const sizes: number[] = [];
  const { trips } = await roundTripCounter(conn).measure(() =>
    inUpdateChunks(ops, (chunk) => {
      sizes.push(chunk.length);
      return docs.bulkWrite(chunk, { ordered: false });
    }),
  );
  t.equal(MAX_UPDATES_PER_COMMAND, 8);
  t.same(sizes, [8, 8, 4]);
  t.same(trips.storeCommands, ['update docs', 'update docs', 'update docs']);
  const written = await docs.find({}).sort({ v: 1 }).toArray();
  t.same(
    written.map((d) => d.v),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});
