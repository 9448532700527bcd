import t from 'tap';
import { bearer, harness, testRedis } from './helpers.js';
import { json, startWrites } from './write-upstream.js';

t.test('Idempotency-Key', async (t) => {
  const writes = await startWrites(t);
  const h = await harness(t, { REQUESTS_URL: writes.url, IDEMPOTENCY_TTL_SECONDS: 120 });
  const { app } = await h.gateway();
  const owner = h.identity.addUser('admin');
  // Enough room in the rate limit for every call of the file.
  const { raw, keyId } = h.identity.addKey(owner, { plan: 'professional' });
  const other = h.identity.addKey(owner, { plan: 'professional' }).raw;
  let n = 0;
  const newKey = () => `key-${process.pid}-${++n}-${Date.now()}`;
  const post = (key: string | undefined, payload: unknown = { title: 'VPN down' }, credential = raw) =>
    app.inject({
      method: 'POST',
      url: '/v1/requests',
      headers: { ...bearer(credential), ...json(key) },
      payload: JSON.stringify(payload),
    });

  t.test('without the header every call runs', async (t) => {
    const before = writes.calls.length;
    t.equal((await post(undefined)).statusCode, 201);
    t.equal((await post(undefined)).statusCode, 201);
    t.equal(writes.calls.length, before + 2);
  });

  t.test('a retry gets the first answer again, byte for byte, marked as replayed', async (t) => {
    const key = newKey();
    const before = writes.calls.length;
    const first = await post(key);
    t.equal(first.statusCode, 201);
    t.notOk(first.headers['idempotent-replayed'], 'the first answer is not a replay');
    const retry = await post(key);
    t.equal(retry.statusCode, 201);
    t.equal(retry.headers['idempotent-replayed'], 'true');
    t.equal(retry.body, first.body, 'the same bytes, so the same id');
    t.match(
      first.headers.location,
      new RegExp(`^${h.config.OAUTH_ISSUER}/v1/requests/req_`),
      "the service's Location, made absolute from the gateway's public origin",
    );
    t.equal(retry.headers.location, first.headers.location, 'the replay names the same resource');
    t.equal(retry.headers['content-type'], first.headers['content-type']);
    t.notOk(retry.headers['x-upstream-only'], 'only the headers describing the body are replayed');
    t.not(retry.headers['x-request-id'], first.headers['x-request-id'], 'the retry is a call of its own');
    t.ok(retry.headers['x-ratelimit-remaining'], 'and carries its own rate-limit headers');
    t.equal(
      Number(retry.headers['x-ratelimit-remaining']),
      Number(first.headers['x-ratelimit-remaining']) - 1,
      'a replay counts as a call',
    );
    t.equal(writes.calls.length, before + 1, 'the service saw one call');

    const redis = testRedis(t);
    await redis.connect();
    const ttl = await redis.ttl(`${h.config.REDIS_KEY_PREFIX}idem:key:${keyId}:${key}`);
    t.ok(ttl > 0 && ttl <= 120, `stored for IDEMPOTENCY_TTL_SECONDS (ttl ${ttl})`);
  });

  t.test('the same key for a different request is 422, and runs nothing', async (t) => {
    const key = newKey();
    t.equal((await post(key)).statusCode, 201);
    const before = writes.calls.length;
    const variants = [
      post(key, { title: 'VPN down!' }),
      app.inject({
        method: 'POST',
        url: '/v1/requests?x=1',
        headers: { ...bearer(raw), ...json(key) },
        payload: JSON.stringify({ title: 'VPN down' }),
      }),
      app.inject({
        method: 'PATCH',
        url: '/v1/requests/req_1',
        headers: { ...bearer(raw), ...json(key) },
        payload: JSON.stringify({ title: 'VPN down' }),
      }),
    ];
    for (const res of await Promise.all(variants)) {
      t.equal(res.statusCode, 422);
      t.equal(res.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
      t.match(res.json().error.message, /different request/);
    }
    t.equal(writes.calls.length, before);
  });

  t.test(
    'the same JSON sent again in another spelling is the same request; other bodies compare bytes',
    async (t) => {
      const key = newKey();
      const send = (body: string, contentType = 'application/json') =>
        app.inject({
          method: 'POST',
          url: '/v1/requests',
          headers: { ...bearer(raw), ...json(key), 'content-type': contentType },
          payload: body,
        });
      const first = await send('{"title":"VPN down","priority":"high","tags":["vpn",1.0]}');
      t.equal(first.statusCode, 201);
      const before = writes.calls.length;
      for (const respelt of [
        '{"priority":"high","title":"VPN down","tags":["vpn",1.0]}',
        '{\n  "title": "VPN down",\n  "priority": "high",\n  "tags": ["vpn", 1]\n}\n',
        '{"title":"VPN\\u0020down","tags":["vpn",1e0],"priority":"high"}',
      ]) {
        const retry = await send(respelt);
        t.equal(retry.statusCode, 201, `replayed, not refused: ${respelt.replace(/\s+/g, ' ')}`);
        t.equal(retry.headers['idempotent-replayed'], 'true');
        t.equal(retry.body, first.body, 'the first answer');
      }
      t.equal(writes.calls.length, before, 'nothing ran again');
      for (const [body, why] of [
        ['{"title":"VPN down","priority":"high","tags":[1.0,"vpn"]}', 'array order is meaning'],
        ['{"title":"VPN down","priority":"low","tags":["vpn",1.0]}', 'another value'],
        ['{"title":"VPN down","priority":"high","tags":["vpn",1.0],"x":null}', 'another member'],
      ]) {
        t.equal((await send(body)).statusCode, 422, `a different JSON body: ${why}`);
      }
      // Not JSON: compared byte for byte, as sent.
      const textKey = newKey();
      const text = (body: string) =>
        app.inject({
          method: 'POST',
          url: '/v1/requests',
          headers: { ...bearer(raw), ...json(textKey), 'content-type': 'text/plain' },
          payload: body,
        });
      await text('{"a":1,"b":2}');
      t.equal(
        (await text('{"a":1,"b":2}')).headers['idempotent-replayed'],
        'true',
        'the same bytes: replayed',
      );
      t.equal((await text('{"b":2,"a":1}')).statusCode, 422, 'other bytes of a text body: 422');
    },
  );

  t.test('keys are per credential', async (t) => {
    const key = newKey();
    const mine = await post(key);
    const theirs = await post(key, { title: 'VPN down' }, other);
    t.equal(theirs.statusCode, 201);
    t.notOk(theirs.headers['idempotent-replayed']);
    t.not(theirs.headers.location, mine.headers.location, 'another credential runs its own call');
  });

  t.test('a retry while the first call runs is 409 with Retry-After', async (t) => {
    const key = newKey();
    writes.hold();
    const before = writes.calls.length;
    const first = post(key);
    const redis = testRedis(t);
    await redis.connect();
    const entry = `${h.config.REDIS_KEY_PREFIX}idem:key:${keyId}:${key}`;
    // Bounded wait until the first call reached the service (it then holds the claim).
    for (let i = 0; i < 200 && writes.calls.length === before; i++)
      await new Promise((r) => setTimeout(r, 10));
    t.equal(writes.calls.length, before + 1);
    const pttl = await redis.pttl(entry);
    t.ok(pttl > 0 && pttl <= 60_000, `the claim expires on its own (${pttl} ms)`);
    const during = await post(key);
    t.equal(during.statusCode, 409);
    t.equal(during.json().error.code, 'CONFLICT');
    t.equal(during.headers['retry-after'], '1');
    const otherBody = await post(key, { title: 'else' });
    t.equal(otherBody.statusCode, 422, 'a different request is refused even while the first runs');
    writes.release();
    const done = await first;
    t.equal(done.statusCode, 201);
    const after = await post(key);
    t.equal(after.headers['idempotent-replayed'], 'true');
    t.equal(after.body, done.body);
    t.equal(writes.calls.length, before + 1);
  });

  t.test('ten concurrent calls with one key: exactly one runs', async (t) => {
    for (const held of [false, true]) {
      const key = newKey();
      const before = writes.calls.length;
      if (held) writes.hold();
      const calls = Array.from({ length: 10 }, () => post(key));
      if (held) {
        for (let i = 0; i < 200 && writes.calls.length === before; i++)
          await new Promise((r) => setTimeout(r, 10));
        writes.release();
      }
      const answers = await Promise.all(calls);
      t.equal(writes.calls.length, before + 1, `one call reached the service (held: ${held})`);
      const created = answers.filter((a) => a.statusCode === 201);
      const waiting = answers.filter((a) => a.statusCode === 409);
      t.equal(created.length + waiting.length, 10, 'every other call got the replay or a 409');
      t.equal(created.filter((a) => !a.headers['idempotent-replayed']).length, 1, 'one original answer');
      t.equal(new Set(created.map((a) => a.body)).size, 1, 'every 201 is the same answer');
      if (held) t.equal(waiting.length, 9, 'while the first is held, every other is told to wait');
    }
  });

  t.test('two gateways sharing Redis: concurrent retries, one call', async (t) => {
    const second = (await h.gateway()).app;
    const key = newKey();
    const before = writes.calls.length;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? second : app).inject({
          method: 'POST',
          url: '/v1/requests',
          headers: { ...bearer(raw), ...json(key) },
          payload: JSON.stringify({ title: 'VPN down' }),
        }),
      ),
    );
    t.equal(writes.calls.length, before + 1);
    t.ok(answers.every((a) => a.statusCode === 201 || a.statusCode === 409));
    const replay = await second.inject({
      method: 'POST',
      url: '/v1/requests',
      headers: { ...bearer(raw), ...json(key) },
      payload: JSON.stringify({ title: 'VPN down' }),
    });
    t.equal(replay.headers['idempotent-replayed'], 'true', 'the other replica replays it');
    t.equal(
      replay.body,
      answers.find((a) => !a.headers['idempotent-replayed'] && a.statusCode === 201)?.body,
    );
  });

  t.test('4xx answers are stored; 5xx are not (a retry runs again)', async (t) => {
    const at = (status: number, key: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/requests?status=${status}`,
        headers: { ...bearer(raw), ...json(key) },
        payload: '{}',
      });
    const key4 = newKey();
    const before = writes.calls.length;
    const refused = await at(400, key4);
    t.equal(refused.statusCode, 400);
    const again = await at(400, key4);
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.equal(again.body, refused.body);
    t.equal(writes.calls.length, before + 1);

    const key5 = newKey();
    t.equal((await at(500, key5)).statusCode, 500);
    const retried = await at(500, key5);
    t.equal(retried.statusCode, 500);
    t.notOk(retried.headers['idempotent-replayed'], 'a 5xx is not replayed');
    t.equal(writes.calls.length, before + 3, 'the retry after a 5xx ran');
  });

  t.test('keys must be 1–255 printable ASCII characters', async (t) => {
    const before = writes.calls.length;
    for (const [key, why] of [
      ['x'.repeat(256), /longer than 255/],
      ['', /empty/],
      ['tab\there', /printable ASCII/],
      ['caf\u00e9', /printable ASCII/],
    ] as const) {
      const res = await post(key);
      t.equal(res.statusCode, 400, JSON.stringify(key));
      t.equal(res.json().error.code, 'VALIDATION_ERROR');
      t.match(res.json().error.message, why);
    }
    t.equal(writes.calls.length, before, 'refused keys run nothing');
    t.equal((await post('x'.repeat(255))).statusCode, 201, '255 characters are fine');
    t.equal((await post(`${newKey()} ~!@#$%^&*()`)).statusCode, 201, 'any printable ASCII');
  });

  t.test(
    'uploads: same key, same length and type (any boundary) replays; another length is 422',
    async (t) => {
      const key = newKey();
      const upload = (boundary: string, size: number) =>
        app.inject({
          method: 'POST',
          url: '/v1/requests/req_1/attachments',
          headers: {
            ...bearer(raw),
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'idempotency-key': key,
          },
          payload: Buffer.alloc(size, 1),
        });
      const before = writes.calls.length;
      const first = await upload('aaaa', 5000);
      t.equal(first.statusCode, 201);
      const retry = await upload('bbbb', 5000);
      t.equal(retry.headers['idempotent-replayed'], 'true');
      t.equal(retry.body, first.body);
      t.equal((await upload('aaaa', 5001)).statusCode, 422);
      t.equal(writes.calls.length, before + 1);
    },
  );

  t.test('GET and DELETE ignore the header', async (t) => {
    const key = newKey();
    const before = writes.calls.length;
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({
        method: 'DELETE',
        url: '/v1/requests/req_1',
        headers: { ...bearer(raw), 'idempotency-key': key },
      });
      t.notOk(res.headers['idempotent-replayed']);
    }
    t.equal(writes.calls.length, before + 2);
  });
});
