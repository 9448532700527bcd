import timers from 'node:timers';
import t from 'tap';
import { testMongo } from '../src/testing/index.js';

// Issue 37: nothing polls at idle. Since 6.18 the MongoDB driver re-arms a 100 ms maintenance timer
// in every connection pool whatever its settings: ten wake-ups a second per pool per process, most
// of an idle service's CPU. patches/mongodb+6.20.0.patch stops it when the pool has nothing to
// maintain (no minPoolSize, no maxIdleTimeMS: the platform's connections), as 6.17 did.
t.test('an idle store connection arms no sub-second timer', async (t) => {
  const conn = await testMongo(t, 'idle');
  await conn.db!.admin().ping(); // the pool holds a connection, checked back in
  const original = timers.setTimeout;
  const sleep = (ms: number) => new Promise((resolve) => original(resolve, ms));
  const armed: string[] = [];
  timers.setTimeout = ((callback: () => void, ms?: number) => {
    const stack = new Error().stack ?? '';
    if ((ms ?? 0) < 1000 && stack.includes('node_modules/mongodb/')) armed.push(stack);
    return original(callback, ms);
  }) as typeof timers.setTimeout;
  t.teardown(() => {
    timers.setTimeout = original;
  });
  // The driver's own timers read `timers.setTimeout` at each call: a pool loop would re-arm ~15 times.
  await sleep(1500);
  timers.setTimeout = original;
  t.same(armed, [], 'no driver timer under a second while idle');
  // Still a working connection after the quiet spell.
  t.same((await conn.db!.admin().ping()).ok, 1);
});
