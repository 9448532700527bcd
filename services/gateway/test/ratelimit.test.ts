import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AUTHENTICATED_CLIENT_HEADER } from '@support-desk/contracts';
import { eventually, startPrivateRedis } from '@support-desk/platform/testing';
import t from 'tap';
import { bearer, GOOD_CLIENT_SECRET, harness } from './helpers.js';

/** The `t` of a `RateLimit` field: seconds until the quota resets. */
const secondsToReset = (field: unknown) => Number(/;t=(\d+)$/.exec(String(field))?.[1] ?? NaN);

t.test('rate limits', async (t) => {
  const h = await harness(t);
  const { app } = await h.gateway();
  const admin = h.identity.addUser('admin');

  t.test('exactly N calls, then 429 with headers counting down to 0 and a sane reset', async (t) => {
    const { raw } = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 5, events: 3 } });
    // Every call's reset is when the first call leaves the 60 s window: Redis logged that call at some
    // instant between sending it and its answer (same clock), so the reset lies within that span + 60 s.
    let firstSpan = { from: 0, to: 0 };
    for (let i = 1; i <= 5; i++) {
      const sentAt = Date.now();
      const res = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
      if (i === 1)
        firstSpan = {
          from: Math.ceil((sentAt + 60_000) / 1000),
          to: Math.ceil((Date.now() + 60_000) / 1000),
        };
      t.equal(res.statusCode, 200, `call ${i}`);
      t.equal(res.headers['x-ratelimit-limit'], '5');
      t.equal(res.headers['x-ratelimit-remaining'], String(5 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      t.ok(
        Number.isInteger(reset) && reset >= firstSpan.from && reset <= firstSpan.to,
        `reset ${reset} is the epoch second the first call leaves the window (${firstSpan.from}..${firstSpan.to})`,
      );
      t.equal(res.headers['ratelimit-policy'], '"general";q=5;w=60');
      t.match(res.headers.ratelimit, new RegExp(`^"general";r=${5 - i};t=\\d+$`));
      const seconds = secondsToReset(res.headers.ratelimit);
      t.ok(seconds >= 1 && seconds <= 60, `t=${seconds} lies within the window (w=60)`);
    }
    const refused = await app.inject({ method: 'GET', url: '/v1/requests/req_1', headers: bearer(raw) });
    t.equal(refused.statusCode, 429);
    t.equal(refused.json().error.code, 'RATE_LIMITED');
    t.match(refused.json().error.message, /general/);
    t.equal(refused.headers['x-ratelimit-remaining'], '0');
    const retry = Number(refused.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    t.equal(secondsToReset(refused.headers.ratelimit), retry, 'on a 429, t is Retry-After');
    // Refused again without asking Redis (the refusal memory): the same rule.
    const again = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(raw) });
    t.equal(again.statusCode, 429);
    t.equal(secondsToReset(again.headers.ratelimit), Number(again.headers['retry-after']), 'and again');

    t.test('a bulk call counts once per item, all or nothing', async (t) => {
      const { raw: bulkKey } = h.identity.addKey(admin, {
        plan: 'enterprise',
        limits: { general: 10, events: 3 },
      });
      const bulk = (n: number) =>
        app.inject({
          method: 'POST',
          url: '/v1/requests/bulk',
          headers: { ...bearer(bulkKey), 'content-type': 'application/json' },
          payload: {
            action: 'update',
            items: Array.from({ length: n }, (_, i) => ({ id: `req_${i}` })),
            changes: { priority: 'low' },
          },
        });
      const four = await bulk(4);
      t.not(four.statusCode, 429, 'four items fit');
      t.equal(four.headers['x-ratelimit-remaining'], '6', 'and count four');
      const seven = await bulk(7);
      t.equal(seven.statusCode, 429, 'seven do not fit in the six left');
      t.match(seven.json().error, { code: 'RATE_LIMITED', message: /once per item/ });
      t.ok(Number(seven.headers['retry-after']) >= 1, 'with Retry-After');
      const single = await app.inject({ method: 'GET', url: '/v1/requests', headers: bearer(bulkKey) });
      t.equal(single.statusCode, 200, 'a single call still fits: the refused items took nothing');
      t.equal(single.headers['x-ratelimit-remaining'], '4', 'the refused call counted once');
      const fits = await bulk(3);
      t.not(fits.statusCode, 429, 'exactly the rest fits');
      t.equal(fits.headers['x-ratelimit-remaining'], '1');
    });

    t.test('the events bucket is separate', async (t) => {
      for (let i = 1; i <= 3; i++) {
        const res = await app.inject({ method: 'GET', url: '/v1/events', headers: bearer(raw) });
        t.equal(res.statusCode, 200);
        t.equal(res.headers['x-ratelimit-limit'], '3');
        t.equal(res.headers['x-ratelimit-remaining'], String(3 - i));
        t.equal(res.headers['ratelimit-policy'], '"events";q=3;w=60');
      }
      const res = await app.inject({ method: 'GET', url: '/v1/requests/req_1/events', headers: bearer(raw) });
      t.equal(res.statusCode, 429, '/v1/requests/:id/events counts in the events bucket');
      t.match(res.json().error.message, /events bucket/);
    });
  });

  t.test('plans: standard and professional limits, the default plan', async (t) => {
    const standard = h.identity.addKey(admin, { plan: 'standard' });
    const pro = h.identity.addKey(admin, { plan: 'professional' });
    const enterpriseNoLimits = h.identity.addKey(admin, { plan: 'enterprise', limits: null });
    const limitOf = async (raw: string, url = '/v1/requests') =>
      (await app.inject({ method: 'GET', url, headers: bearer(raw) })).headers['x-ratelimit-limit'];
    t.equal(await limitOf(standard.raw), '60');
    t.equal(await limitOf(standard.raw, '/v1/events'), '30');
    t.equal(await limitOf(pro.raw), '300');
    t.equal(await limitOf(pro.raw, '/v1/events/evt_1'), '120');
    t.equal(
      await limitOf(enterpriseNoLimits.raw),
      '60',
      'enterprise without limits falls back to DEFAULT_PLAN',
    );
  });

  t.test('counted per API key; per (OAuth client, user) for tokens', async (t) => {
    const a = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 2, events: 2 } });
    const b = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 2, events: 2 } });
    for (let i = 0; i < 2; i++) await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(a.raw) });
    t.equal((await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(a.raw) })).statusCode, 429);
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(b.raw) })).statusCode,
      200,
      'other key unaffected',
    );

    const client = h.identity.addClient('enterprise', { general: 2, events: 2 });
    const u1 = h.identity.addUser('admin');
    const u2 = h.identity.addUser('admin');
    const t1 = await h.jwks.sign({ sub: u1.id, client_id: client, scope: 'admin' });
    const t1b = await h.jwks.sign({ sub: u1.id, client_id: client, scope: 'admin' });
    const t2 = await h.jwks.sign({ sub: u2.id, client_id: client, scope: 'admin' });
    t.equal((await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(t1) })).statusCode, 200);
    t.equal((await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(t1b) })).statusCode, 200);
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(t1) })).statusCode,
      429,
      'two tokens of one (client, user) share the count',
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(t2) })).statusCode,
      200,
      'other user',
    );
  });

  t.test('failed authentication and refused addresses consume no quota', async (t) => {
    const k = h.identity.addKey(admin, {
      plan: 'enterprise',
      limits: { general: 1, events: 1 },
      allowlist: ['192.0.2.1'],
    });
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({
        method: 'GET',
        url: '/v1/me',
        headers: bearer(k.raw),
        remoteAddress: '198.51.100.9',
      });
      t.equal(res.statusCode, 403);
    }
    const ok = await app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: bearer(k.raw),
      remoteAddress: '192.0.2.1',
    });
    t.equal(ok.statusCode, 200);
    t.equal(ok.headers['x-ratelimit-remaining'], '0');
  });

  t.test('two gateway instances sharing Redis admit no more than N under concurrent load', async (t) => {
    // A generous command timeout: on a starved machine 300 concurrent calls can keep the event
    // loop from reading Redis' answers for more than the default, and fail-open would then admit
    // calls — correct behaviour, but not what this test is about.
    // No cap on calls in flight: the per-minute count is what is under test.
    const patient = { REDIS_COMMAND_TIMEOUT_MS: 10_000, CREDENTIAL_CONCURRENCY: 0 };
    const { app, rateLimiterStats } = await h.gateway(patient);
    const other = await h.gateway(patient);
    const N = 40;
    const k = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: N, events: N } });
    // Warm both instances' key caches so every call below reaches the limiter.
    await app.inject({ method: 'GET', url: '/v1/events', headers: bearer(k.raw) });
    await other.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(k.raw) });
    const calls = Array.from({ length: 300 }, (_, i) =>
      (i % 2 ? app : other.app).inject({ method: 'GET', url: '/v1/requests', headers: bearer(k.raw) }),
    );
    const statuses = (await Promise.all(calls)).map((r) => r.statusCode);
    t.equal(statuses.filter((s) => s === 200).length, N, `exactly ${N} admitted`);
    t.equal(statuses.filter((s) => s === 429).length, 300 - N);
    t.equal(rateLimiterStats?.failOpen, 0, 'the limiter answered every call');
  });

  t.test('rate limiting off: no headers, no counting', async (t) => {
    const off = await h.gateway({ RATE_LIMIT_ENABLED: false });
    const k = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 1, events: 1 } });
    for (let i = 0; i < 3; i++) {
      const res = await off.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(k.raw) });
      t.equal(res.statusCode, 200);
      t.notOk(res.headers['x-ratelimit-limit']);
    }
  });

  t.test(
    'the token endpoint counts a client only once identity authenticated it; every post per address',
    async (t) => {
      const limited = await h.gateway({ OAUTH_LIMIT_PER_IP: 3, OAUTH_TOKEN_LIMIT_PER_CLIENT: 2 });
      const token = (clientId: string, ip: string, secret = 'wrong') =>
        limited.app.inject({
          method: 'POST',
          url: '/oauth/token',
          remoteAddress: ip,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
          },
          payload: 'grant_type=refresh_token&refresh_token=r',
        });
      // The login form posted from one address (identity's answer does not matter, the limit does).
      const loginFrom = (remoteAddress: string) =>
        limited.app.inject({
          method: 'POST',
          url: '/oauth/login',
          remoteAddress,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'email=a@example.com&password=x',
        });
      for (let i = 0; i < 3; i++) {
        const anonymous = await token('cli_a', `192.0.2.${20 + i}`);
        t.equal(anonymous.statusCode, 200, 'unauthenticated posts naming the client reach identity');
        t.notOk(anonymous.headers[AUTHENTICATED_CLIENT_HEADER]);
      }
      t.equal(
        (await token('cli_a', '192.0.2.30', GOOD_CLIENT_SECRET)).statusCode,
        200,
        'the app still exchanges',
      );
      const second = await token('cli_a', '192.0.2.31', GOOD_CLIENT_SECRET);
      t.equal(second.statusCode, 200);
      t.notOk(second.headers[AUTHENTICATED_CLIENT_HEADER], "identity's note never leaves the gateway");
      // The gateway counts the call when identity's answer arrives: wait for that write.
      let n = 40;
      const refused = await eventually(
        async () => {
          const res = await token('cli_a', `192.0.2.${n++}`, GOOD_CLIENT_SECRET);
          return res.statusCode === 429 ? res : null;
        },
        { timeoutMs: 5000, intervalMs: 100, what: 'the client budget spent' },
      );
      t.ok(
        n <= 42,
        'refused at the third authenticated call (or the one after, if the count was still in flight)',
      );
      t.ok(refused.headers['retry-after'], 'per client, with Retry-After');

      t.equal((await token('cli_b', '192.0.2.10')).statusCode, 200);
      t.equal((await token('cli_c', '192.0.2.10')).statusCode, 200);
      t.equal((await token('cli_d', '192.0.2.10')).statusCode, 200, 'third call from .10');
      t.equal((await token('cli_e', '192.0.2.10')).statusCode, 429, 'per address: a fourth call from .10');
      const sameSubnet = await loginFrom('2001:db8:5:6::1');
      t.equal(sameSubnet.statusCode, 200);
      for (const ip of ['2001:db8:5:6::2', '2001:db8:5:6:aaaa::3']) {
        await loginFrom(ip);
      }
      const fourth = await loginFrom('2001:db8:5:6:ffff::4');
      t.equal(fourth.statusCode, 429, 'an IPv6 /64 is one address');

      const malformed = await limited.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: '192.0.2.99',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from('%zz:secret').toString('base64')}`,
        },
        payload: 'grant_type=client_credentials',
      });
      t.equal(malformed.statusCode, 200, 'a malformed Basic name is no 500: identity gets to refuse it');
    },
  );
});

t.test('Redis stopped', async (t) => {
  const redis = await startPrivateRedis(t);
  const h = await harness(t);
  // Readiness turns off at the first failed check here (a grace of 10-15 s in production).
  const open = await h.gateway(
    { RATE_LIMIT_FAILURE_MODE: 'fail-open', READINESS_DOWN_AFTER_MS: 0 },
    redis.url,
  );
  const closed = await h.gateway({ RATE_LIMIT_FAILURE_MODE: 'fail-closed' }, redis.url);
  const admin = h.identity.addUser('admin');
  const { raw } = h.identity.addKey(admin);
  t.equal(
    (await open.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) })).headers[
      'x-ratelimit-limit'
    ],
    '60',
  );
  t.equal((await closed.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) })).statusCode, 200);
  await redis.stop();

  const admitted = await open.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) });
  t.equal(admitted.statusCode, 200, 'fail-open admits');
  t.notOk(admitted.headers['x-ratelimit-limit'], 'no made-up headers');
  t.ok(open.rateLimiterStats && open.rateLimiterStats.failOpen >= 1, 'counted');
  const refused = await closed.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(raw) });
  t.equal(refused.statusCode, 503, 'fail-closed refuses');
  t.equal(refused.json().error.code, 'SERVICE_UNAVAILABLE');
  const ready = await eventually(
    async () => ((await open.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 503 ? true : null),
    { timeoutMs: 5000, what: 'readiness to turn off' },
  );
  t.ok(ready, '/readyz reports redis down');

  // JWT path with Redis down: the deny-list check degrades to identity's user status.
  const token = await h.jwks.sign({ sub: admin.id, client_id: h.identity.addClient(), scope: 'admin' });
  t.equal((await open.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) })).statusCode, 200);
});

t.test('calls in flight per credential: past the cap, 429 with Retry-After at once', async (t) => {
  // A requests service that holds its lists until the test lets them go, and answers the rest.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held = createServer((req, res) => {
    const answer = () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{}}');
    if (req.url?.startsWith('/v1/requests?')) void released.then(answer);
    else answer();
  });
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    held.closeAllConnections();
    held.close();
  });
  const h = await harness(t);
  const { app } = await h.gateway({
    CREDENTIAL_CONCURRENCY: 2,
    REQUESTS_URL: `http://127.0.0.1:${(held.address() as AddressInfo).port}`,
  });
  const admin = h.identity.addUser('admin');
  const busy = h.identity.addKey(admin, { plan: 'enterprise', limits: { general: 100, events: 100 } }).raw;
  const other = h.identity.addKey(admin).raw;
  const get = (url: string, key: string) => app.inject({ method: 'GET', url, headers: bearer(key) });

  // (`then` sends an inject call: these two go out now and wait at the service.)
  const running = [get('/v1/requests?n=1', busy), get('/v1/requests?n=2', busy)].map((c) => c.then((r) => r));
  const refused = await eventually(
    async () => {
      const res = await get('/v1/requests/req_1', busy);
      return res.statusCode === 429 ? res : null;
    },
    { timeoutMs: 5000, what: 'the third call in flight to be refused' },
  );
  t.equal(refused.headers['retry-after'], '1', 'with Retry-After');
  t.match(refused.json(), {
    success: false,
    error: { code: 'RATE_LIMITED', message: /at most 2 at once/ },
  });
  t.notOk(refused.headers['x-ratelimit-remaining'], 'refused before the plan counted it');
  const quota = (await get('/v1/requests/req_1', other)).headers;
  t.equal(quota['x-ratelimit-remaining'], '59', 'another credential is not held back');

  release();
  t.same(
    (await Promise.all(running)).map((r) => r.statusCode),
    [200, 200],
  );
  const after = await get('/v1/requests/req_1', busy);
  t.equal(after.statusCode, 200, 'the slots are given back once answered');
  t.equal(after.headers['x-ratelimit-remaining'], '97', 'only the calls that ran counted against the plan');
});
