import { Schema } from 'mongoose';
import t from 'tap';
import { deleteInBatches, periodicTask } from '../src/index.js';
import { testLogger, testMongo } from '../src/testing/index.js';

t.test('periodicTask: passes never overlap, a failed pass is retried, stop waits', async (t) => {
  let started = 0;
  let release: () => void = () => undefined;
  let fail = true;
  const task = periodicTask({
    name: 'probe',
    intervalMs: 3_600_000,
    logger: testLogger(),
    onError: -1,
    run: async () => {
      started++;
      await new Promise<void>((r) => (release = r));
      if (fail) throw new Error('store unreachable');
      return started;
    },
  });
  const a = task.runNow();
  const b = task.runNow();
  t.equal(a, b, 'a second caller joins the running pass');
  await Promise.resolve();
  release();
  t.equal(await a, -1, 'a failed pass answers onError instead of throwing');
  t.equal(started, 1);

  fail = false;
  task.start(); // the first pass starts at once
  task.start(); // idempotent
  t.equal(started, 2, 'start runs one pass immediately, once');
  const stopped = task.stop();
  let done = false;
  void stopped.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  t.equal(done, false, 'stop waits for the running pass');
  release();
  await stopped;
  t.equal(started, 2, 'no pass after stop');
});

t.test('deleteInBatches: bounded rounds in order, and only what still matches', async (t) => {
  const conn = await testMongo(t, 'housekeeping');
  const model = conn.model(
    'Item',
    new Schema<{ _id: number; expired: boolean }>({ _id: Number, expired: Boolean }, { versionKey: false }),
  );
  await model.insertMany(Array.from({ length: 25 }, (_, i) => ({ _id: i, expired: i < 23 })));
  const opts = { sort: { _id: 1 as const }, batch: 5, maxRounds: 3 };
  t.equal(await deleteInBatches(model, { expired: true }, opts), 15, 'three rounds of five');
  t.same(
    (await model.find({ expired: true }).sort({ _id: 1 }).lean()).map((d) => d._id),
    [15, 16, 17, 18, 19, 20, 21, 22],
    'the oldest in sort order went first',
  );
  t.equal(await deleteInBatches(model, { expired: true }, opts), 8, 'the rest, stopping at a short round');
  t.equal(await model.countDocuments(), 2, 'what does not match stays');
  t.equal(await deleteInBatches(model, { expired: true }, opts), 0);
});
