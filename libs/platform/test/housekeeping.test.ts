import t from 'tap';
import { periodicTask } from '../src/subpaths/core.js';
import { testLogger } from '../src/testing/index.js';

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
