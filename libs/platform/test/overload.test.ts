// Admission, deadlines and readiness (issue 31), on a real listening app and the real store.
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Schema } from 'mongoose';
import t, { type Test } from 'tap';
import {
  CALL_TIMEOUT_HEADER,
  createHttpApp,
  currentCall,
  ok,
  outsideCall,
  registerHealth,
  registerOverloadControls,
  remainingCallMs,
} from '../src/subpaths/http.js';
import { eventually, testCountedMongo, testLogger } from '../src/testing/index.js';

const LIMITS = {
  CALL_TIMEOUT_MS: 5000,
  LIST_CONCURRENCY: 2,
  SEARCH_CONCURRENCY: 1,
  EXPORT_CONCURRENCY: 1,
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: 0,
};

/** A promise with its resolve, to hold calls open until the test lets them go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

async function listening(
  t: Test,
  build: (app: ReturnType<typeof createHttpApp>) => Promise<void>,
  limits = LIMITS,
) {
  const app = createHttpApp({ logger: testLogger() });
  await registerOverloadControls(app, limits);
  await build(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

t.test('lists past their limit are refused at once with Retry-After; cheap calls keep flowing', async (t) => {
  const held = gate();
  const origin = await listening(t, async (app) => {
    app.get(
      '/things',
      { config: { admission: (r) => ((r.query as { q?: string }).q ? 'search' : 'list') } },
      async () => {
        await held.opened;
        return ok({ things: [] });
      },
    );
    app.get('/things/:id', async () => ok({ id: 'one' }));
  });
  const running = [
    fetch(`${origin}/things`),
    fetch(`${origin}/things?page=2`),
    fetch(`${origin}/things?q=a`),
  ];
  // The two lists and the search are admitted (each within its class's limit) and held open.
  await eventually(async () => ((await fetch(`${origin}/things`)).status === 503 ? true : null), {
    timeoutMs: 5000,
    what: 'the list limit to be reached',
  });
  const refused = await fetch(`${origin}/things`);
  t.equal(refused.status, 503, 'a third list is refused');
  t.equal(refused.headers.get('retry-after'), '1', 'with Retry-After');
  const body = (await refused.json()) as { success: boolean; error: { code: string; message: string } };
  t.match(body, { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: /Too many lists/ } });
  const search = await fetch(`${origin}/things?q=b`);
  t.equal(search.status, 503, 'a second search is refused: searches have their own limit');
  t.match(await search.json(), { error: { message: /Too many searches/ } });
  t.equal((await fetch(`${origin}/things/one`)).status, 200, 'a single read is not held back');

  held.open();
  t.same(
    (await Promise.all(running)).map((r) => r.status),
    [200, 200, 200],
  );
  t.equal(
    (await fetch(`${origin}/things`)).status,
    200,
    'the slots are given back once the answers went out',
  );
});

t.test('a saturated process sheds every call but health, then recovers', async (t) => {
  const origin = await listening(
    t,
    async (app) => {
      registerHealth(app, {});
      app.get('/things/:id', async () => ok({ id: 'one' }));
    },
    { ...LIMITS, PRESSURE_MAX_EVENT_LOOP_DELAY_MS: 100 },
  );
  t.equal((await fetch(`${origin}/things/one`)).status, 200, 'a calm process answers');
  // One stall (1.6 s of synchronous work, as a long task or a pause of the process) is over by the
  // time it is measured: the calls after it are served, none shed, for the next 2.5 s.
  const stallEnds = Date.now() + 1600;
  while (Date.now() < stallEnds) Math.sqrt(Math.random());
  const afterStall: number[] = [];
  for (const until = Date.now() + 2500; Date.now() < until; await sleep(100))
    afterStall.push((await fetch(`${origin}/things/one`)).status);
  t.same([...new Set(afterStall)], [200], 'a one-off stall sheds nothing');
  // Sustained work: 400 ms of synchronous work per turn of the event loop, turn after turn (at
  // most 10 s), as a process whose calls arrive faster than it serves them.
  let burning = true;
  const burnUntil = Date.now() + 10_000;
  const burn = () => {
    if (!burning || Date.now() > burnUntil) return;
    const until = Date.now() + 400;
    while (Date.now() < until) Math.sqrt(Math.random());
    setImmediate(burn);
  };
  burn();
  const shed = await eventually(
    async () => {
      const answer = await fetch(`${origin}/things/one`);
      if (answer.status !== 503) return null;
      const ready = await fetch(`${origin}/readyz`);
      return {
        answer,
        body: await answer.json(),
        ready: ready.status,
        live: (await fetch(`${origin}/livez`)).status,
      };
    },
    { timeoutMs: 8000, intervalMs: 25, what: 'the process to shed a call' },
  ).finally(() => (burning = false));
  t.equal(shed.answer.headers.get('retry-after'), '1', 'with Retry-After');
  t.match(shed.body, { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: /overloaded/ } });
  t.same([shed.ready, shed.live], [200, 200], 'health answers while the process sheds');
  await eventually(async () => ((await fetch(`${origin}/things/one`)).status === 200 ? true : null), {
    timeoutMs: 5000,
    what: 'the process to take calls again',
  });
});

t.test('a caller that hangs up gives its slot back and cancels its call', async (t) => {
  const aborted: string[] = [];
  const origin = await listening(t, async (app) => {
    app.get('/things', { config: { admission: 'list' } }, async () => {
      const call = currentCall()!;
      await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve()));
      aborted.push(String((call.signal.reason as Error).message));
      return ok({ things: [] });
    });
  });
  const callers = [new AbortController(), new AbortController()];
  const calls = callers.map((c) => fetch(`${origin}/things`, { signal: c.signal }).catch(() => null));
  await eventually(async () => ((await fetch(`${origin}/things`)).status === 503 ? true : null), {
    timeoutMs: 5000,
    what: 'both slots to be taken',
  });
  for (const c of callers) c.abort();
  await Promise.all(calls);
  await eventually(async () => (aborted.length === 2 ? true : null), {
    timeoutMs: 5000,
    what: 'both aborts',
  });
  t.same(aborted, ['caller gone', 'caller gone'], 'the service saw its callers leave');
  const later = new AbortController();
  const again = fetch(`${origin}/things`, { signal: later.signal }).catch(() => null);
  await eventually(async () => (aborted.length === 2 && (await probeSlot(origin)) ? true : null), {
    timeoutMs: 5000,
    what: 'a slot to be free again',
  });
  later.abort();
  await again;
});

/** True when a list is admitted again (a slot is free): it is then held, so hang up at once. */
async function probeSlot(origin: string): Promise<boolean> {
  const c = new AbortController();
  const res = await Promise.race([
    fetch(`${origin}/things`, { signal: c.signal }).catch(() => null),
    new Promise<null>((r) => setTimeout(() => r(null), 300)),
  ]);
  c.abort();
  return res === null || res.status !== 503;
}

t.test("every read of a call carries the call's remaining time as maxTimeMS", async (t) => {
  const conn = await testCountedMongo(t, 'deadline');
  const Thing = conn.model('Thing', new Schema({ _id: String, n: Number }, { versionKey: false }));
  await Thing.create({ _id: 'thing_1', n: 1 });
  const seen: { command: string; maxTimeMS?: number }[] = [];
  conn.getClient().on('commandStarted', (e) => {
    if (e.commandName === 'find' || e.commandName === 'aggregate')
      seen.push({ command: e.commandName, maxTimeMS: e.command.maxTimeMS as number | undefined });
  });
  const origin = await listening(t, async (app) => {
    app.get('/things', async () => {
      const left = remainingCallMs();
      const [things, count] = await Promise.all([
        Thing.find({ n: 1 }).lean(),
        Thing.countDocuments({ n: 1 }),
      ]);
      return ok({ left, things: things.length, count });
    });
    app.get('/late', async () => {
      await new Promise((r) => setTimeout(r, 400));
      return ok(await Thing.findById('thing_1').lean());
    });
  });

  const asked = await fetch(`${origin}/things`, { headers: { [CALL_TIMEOUT_HEADER]: '800' } });
  const answer = (await asked.json()) as { data: { left: number; count: number } };
  t.equal(answer.data.count, 1);
  t.ok(
    answer.data.left <= 700 && answer.data.left > 0,
    `the gateway's budget less the answer margin (${answer.data.left})`,
  );
  t.equal(seen.length, 2, 'a find and a count');
  for (const s of seen)
    t.ok(s.maxTimeMS !== undefined && s.maxTimeMS <= 700, `${s.command} maxTimeMS ${s.maxTimeMS}`);

  seen.length = 0;
  await fetch(`${origin}/things`, { headers: { [CALL_TIMEOUT_HEADER]: '999999' } });
  for (const s of seen) t.ok(s.maxTimeMS! <= LIMITS.CALL_TIMEOUT_MS, 'never more than CALL_TIMEOUT_MS');

  seen.length = 0;
  await Thing.find({ n: 1 }).lean();
  t.equal(seen[0]?.maxTimeMS, undefined, 'background reads (no call) have no deadline');

  const late = await fetch(`${origin}/late`, { headers: { [CALL_TIMEOUT_HEADER]: '300' } });
  t.equal(late.status, 503, 'a read asked after the call ran out of time is not sent');
  t.equal(late.headers.get('retry-after'), '1');
  t.match(await late.json(), { error: { code: 'SERVICE_UNAVAILABLE', message: /ran out of time/ } });
});

t.test(
  'readiness tells slow from down: a slow check keeps it, a failing one past its grace ends it',
  async (t) => {
    const app = createHttpApp({ logger: testLogger() });
    let store: 'answers' | 'slow' | 'fails' = 'answers';
    const state = registerHealth(
      app,
      {
        mongodb: () =>
          store === 'answers'
            ? Promise.resolve()
            : store === 'slow'
              ? new Promise((r) => setTimeout(r, 5000))
              : Promise.reject(new Error('connection refused')),
      },
      { intervalMs: 50, downAfterMs: 300, jitterMs: 0 },
    );
    t.teardown(() => app.close());
    const ready = async () => (await app.inject('/readyz')).statusCode;
    await eventually(async () => ((await ready()) === 200 ? true : null), { what: 'ready' });

    store = 'slow';
    await new Promise((r) => setTimeout(r, 200));
    t.equal(await ready(), 200, 'a check still waiting on a busy store within the grace: still ready');
    store = 'fails';
    await eventually(async () => ((await ready()) === 503 ? true : null), {
      timeoutMs: 10_000,
      what: 'not ready',
    });
    t.match((await app.inject('/readyz')).json(), { error: { message: /mongodb unreachable/ } });
    t.equal((await app.inject('/livez')).statusCode, 200, 'liveness never asks the store');
    store = 'answers';
    await eventually(async () => ((await ready()) === 200 ? true : null), {
      timeoutMs: 10_000,
      what: 'ready again',
    });
    state.draining = true;
    t.equal(await ready(), 503, 'draining still turns it off at once');
  },
);

t.test(
  'work a call starts outlives it: no deadline once answered, none inherited from a woken worker',
  async (t) => {
    const conn = await testCountedMongo(t, 'outlives');
    const Thing = conn.model('Thing', new Schema({ _id: String, n: Number }, { versionKey: false }));
    await Thing.create({ _id: 'thing_1', n: 1 });
    const later: Promise<string>[] = [];
    /** A read 500 ms after the call, past its 300 ms budget: what a timer the call set would do. */
    const readLater = () =>
      new Promise<string>((resolve) =>
        setTimeout(() => {
          Thing.findById('thing_1')
            .lean()
            .then(
              () => resolve(currentCall() ? 'inside a call' : 'read'),
              (err: Error) => resolve(err.message),
            );
        }, 500),
      );
    const origin = await listening(t, async (app) => {
      app.get('/answered', async () => {
        later.push(readLater());
        return ok({});
      });
      app.get('/abandoned', async () => {
        later.push(outsideCall(readLater));
        await new Promise((r) => setTimeout(r, 2000));
        return ok({});
      });
    });
    const answered = await fetch(`${origin}/answered`, { headers: { [CALL_TIMEOUT_HEADER]: '300' } });
    t.equal(answered.status, 200);
    t.equal(await later[0], 'read', 'a timer set by an answered call reads without its deadline');

    const leaving = new AbortController();
    const abandoned = fetch(`${origin}/abandoned`, {
      headers: { [CALL_TIMEOUT_HEADER]: '300' },
      signal: leaving.signal,
    }).catch(() => 'left');
    await eventually(() => later.length === 2, { what: 'the second call started' });
    leaving.abort();
    t.equal(await abandoned, 'left');
    t.equal(await later[1], 'read', 'work woken outside the call runs though its caller left');
  },
);

t.test('a process whose store has not answered yet is not ready, however long the grace', async (t) => {
  const app = createHttpApp({ logger: testLogger() });
  let answer: () => void = () => undefined;
  registerHealth(app, { mongodb: () => new Promise<void>((r) => (answer = r)) }, { downAfterMs: 60_000 });
  t.teardown(() => app.close());
  const first = await app.inject('/readyz');
  t.equal(first.statusCode, 503, 'the first check is still waiting: not ready');
  t.match(first.json(), { error: { message: /mongodb unreachable/ } });
  answer();
  await eventually(async () => ((await app.inject('/readyz')).statusCode === 200 ? true : null), {
    timeoutMs: 5000,
    what: 'ready once the store answered',
  });
});
