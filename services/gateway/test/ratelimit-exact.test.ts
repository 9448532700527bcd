// Exact counting with the batched limiter: two gateways over real sockets, the calls of one
// turn decided by one script call, and the memory of refusals that may only refuse what Redis
// would refuse.
import type { AddressInfo } from 'node:net';
import { startPrivateRedis, testLogger, uniqueName } from '@support-desk/platform/testing';
import t from 'tap';
import { createRateLimiter, type RateDecision } from '../src/store/rate-limiter.js';
import { bearer, harness, testRedis } from './helpers.js';

t.test('500 parallel calls over two gateways sharing Redis: exactly the limit admitted', async (t) => {
  const h = await harness(t);
  // Generous timeouts: on a starved machine 500 calls can keep the event loop from reading
  // Redis' answers for longer than the default (fail-open would then admit calls), and the echo
  // upstream from answering within the harness' 2 s (a 504 after admission).
  // No cap on calls in flight: the per-minute count is what is under test.
  const patient = {
    REDIS_COMMAND_TIMEOUT_MS: 10_000,
    UPSTREAM_TIMEOUT_MS: 60_000,
    CREDENTIAL_CONCURRENCY: 0,
  };
  const gateways = [await h.gateway(patient), await h.gateway(patient)];
  const urls: string[] = [];
  for (const gw of gateways) {
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    urls.push(`http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`);
  }
  const admin = h.identity.addUser('admin');
  const LIMIT = 137;
  const k = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: LIMIT, events: LIMIT } });
  // Warm both instances' key caches (in the events bucket) so every call below reaches the limiter.
  for (const url of urls) await fetch(`${url}/v1/events`, { headers: bearer(k.raw) }).then((r) => r.text());

  const answers = await Promise.all(
    Array.from({ length: 500 }, async (_, i) => {
      const res = await fetch(`${urls[i % 2]}/v1/requests`, { headers: bearer(k.raw) });
      return { status: res.status, headers: res.headers, body: await res.text() };
    }),
  );
  // Every answer but a 429 is an admitted call (an upstream failure would carry the headers too).
  const admitted = answers.filter((a) => a.status !== 429);
  const refused = answers.filter((a) => a.status === 429);
  t.equal(admitted.length, LIMIT, `exactly ${LIMIT} admitted`);
  t.equal(refused.length, 500 - LIMIT, 'every other call refused');
  t.same([...new Set(admitted.map((a) => a.status))], [200], 'every admitted call served');
  // Redis decided one call at a time: the admitted calls saw every count from 1 to the limit once.
  const remaining = admitted.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
  t.same(
    remaining,
    Array.from({ length: LIMIT }, (_, i) => i),
    'X-RateLimit-Remaining: each of limit-1 … 0 exactly once',
  );
  const nowS = Date.now() / 1000;
  let documented = 0;
  for (const a of refused) {
    const reset = Number(a.headers.get('x-ratelimit-reset'));
    const retry = Number(a.headers.get('retry-after'));
    const ok =
      JSON.parse(a.body).error?.code === 'RATE_LIMITED' &&
      a.headers.get('x-ratelimit-limit') === String(LIMIT) &&
      a.headers.get('x-ratelimit-remaining') === '0' &&
      Number.isInteger(reset) &&
      reset >= Math.floor(nowS) &&
      reset <= nowS + 61 &&
      Number.isInteger(retry) &&
      retry >= 1 &&
      retry <= 60 &&
      a.headers.get('ratelimit-policy') === `"general";q=${LIMIT};w=60` &&
      /^"general";r=0;t=\d+$/.test(a.headers.get('ratelimit') ?? '');
    if (ok) documented++;
  }
  t.equal(
    documented,
    refused.length,
    'every 429: RATE_LIMITED, Retry-After and the X-RateLimit/RateLimit headers',
  );
  for (const [i, gw] of gateways.entries()) {
    t.equal(gw.rateLimiterStats?.failOpen, 0, `gateway ${i + 1}: the limiter answered every call`);
  }
  t.comment(
    `refused without a round trip: ${gateways.map((g) => g.rateLimiterStats?.refusedLocally).join(' + ')}`,
  );
});

t.test(
  'one turn, one script call: repeated and distinct keys, check-only calls, more than a script holds',
  async (t) => {
    const redis = testRedis(t);
    await redis.connect();
    const limiter = createRateLimiter({
      redis,
      prefix: `${uniqueName('rlx')}:`,
      windowSeconds: 60,
      failureMode: 'fail-closed',
      logger: testLogger(),
    });
    // 300 calls of one key (more than one script call carries), 20 of another, and check-only
    // calls of the first, all made in the same turn.
    const calls: Promise<RateDecision | null>[] = [];
    const checks: Promise<RateDecision | null>[] = [];
    for (let i = 0; i < 300; i++) {
      calls.push(limiter.take('general:key:a', 100));
      if (i < 20) calls.push(limiter.take('general:key:b', 7));
      if (i % 50 === 0) checks.push(limiter.take('general:key:a', 100, { record: false }));
    }
    const decisions = (await Promise.all(calls)) as RateDecision[];
    const of = (limit: number) => decisions.filter((d) => d.limit === limit);
    t.equal(of(100).filter((d) => d.allowed).length, 100, 'key a: 100 of 300');
    t.equal(of(7).filter((d) => d.allowed).length, 7, 'key b: 7 of 20');
    t.same(
      of(100)
        .filter((d) => d.allowed)
        .map((d) => d.remaining),
      Array.from({ length: 100 }, (_, i) => 99 - i),
      'decided in the order the calls were made',
    );
    await Promise.all(checks);
    const after = await limiter.take('general:key:a', 101);
    t.equal(after?.allowed, true, 'check-only calls were not logged: a 101st fits a limit of 101');
    t.equal(after?.remaining, 0);
  },
);

t.test(
  'the refusal memory refuses only what Redis refuses, and admits again as soon as Redis does',
  async (t) => {
    const redis = testRedis(t);
    await redis.connect();
    const prefix = `${uniqueName('rlm')}:`;
    const options = {
      redis,
      prefix,
      windowSeconds: 1,
      failureMode: 'fail-closed' as const,
      logger: testLogger(),
    };
    const limiter = createRateLimiter(options);
    // Another limiter on the same keys, as another replica: it asks Redis every time.
    const replicaRedis = testRedis(t);
    await replicaRedis.connect();
    const replica = createRateLimiter({ ...options, redis: replicaRedis });
    const key = 'general:key:m';
    for (let i = 0; i < 3; i++)
      t.equal((await limiter.take(key, 3))?.allowed, true, `call ${i + 1} admitted`);
    const byRedis = (await limiter.take(key, 3))!;
    t.equal(byRedis.allowed, false, 'the 4th refused by Redis');
    t.equal(limiter.stats.refusedLocally, 0);
    const local = (await limiter.take(key, 3))!;
    t.equal(local.allowed, false, 'the 5th refused');
    t.equal(limiter.stats.refusedLocally, 1, '…without a round trip');
    t.same(
      { limit: local.limit, remaining: local.remaining, resetAt: local.resetAt },
      { limit: 3, remaining: 0, resetAt: byRedis.resetAt },
      'with the headers Redis gave',
    );
    t.ok(local.retryAfter >= 1 && local.retryAfter <= byRedis.retryAfter, `Retry-After ${local.retryAfter}`);
    t.equal((await limiter.take(key, 4))?.allowed, true, 'a greater limit (plan changed) goes to Redis');

    // From here on nothing is logged: each round asks Redis first (the replica), then this
    // limiter. Whenever Redis admitted, this limiter must admit a moment later.
    let rounds = 0;
    let wrongRefusals = 0;
    for (; rounds < 2000; rounds++) {
      const redisSays = await replica.take(key, 4, { record: false });
      const memorySays = await limiter.take(key, 4, { record: false });
      if (redisSays?.allowed && !memorySays?.allowed) wrongRefusals++;
      if (redisSays?.allowed) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    t.ok(rounds < 2000, `Redis admitted again after ${rounds} rounds (its window freed)`);
    t.equal(wrongRefusals, 0, 'the memory never refused a call Redis had just admitted');
  },
);

t.test('a Redis that forgot the script (restart, SCRIPT FLUSH): the next call loads it again', async (t) => {
  const server = await startPrivateRedis(t);
  const redis = testRedis(t, server.url);
  await redis.connect();
  const limiter = createRateLimiter({
    redis,
    prefix: 'sd:rl:',
    windowSeconds: 60,
    failureMode: 'fail-closed',
    logger: testLogger(),
  });
  t.equal((await limiter.take('general:key:s', 2))?.remaining, 1);
  await redis.script('FLUSH');
  t.equal((await limiter.take('general:key:s', 2))?.remaining, 0, 'counted after the flush');
  t.equal((await limiter.take('general:key:s', 2))?.allowed, false);
});
