import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { newId } from '@support-desk/contracts';
import { decodeDomainEvent, encodeJson } from '@support-desk/platform/messaging';
import { ensureIndexes } from '@support-desk/platform/service';
import {
  asCaller,
  burstPastLimit,
  checkBurst,
  checkListDeadline,
  declaredIndexes,
  eventually,
  publishSigned,
  checkIndexedPlans,
  firstOfEachShape,
  listQueriesOf,
  type ListQuery,
  testCountedMongo,
  testMongo,
  testNats,
  testPrincipal,
  uncovered,
} from '@support-desk/platform/testing';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import {
  admin,
  composeForTest,
  deliveries,
  event,
  eventsFrom,
  publish,
  secretKey,
  startReceiver,
  subscribe,
} from './helpers.js';
import { pendingDelivery } from '../src/use-cases/deliveries.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

t.test(
  'subscriptions: create (secret once), read, list, update, delete, and each change an event',
  async (t) => {
    const { app, nc, names } = await composeForTest(t);
    const created = await subscribe(app, {
      url: 'https://hooks.example.com/a',
      events: ['request.*', 'user.created'],
      description: 'ops board',
    });
    t.match(created, { url: 'https://hooks.example.com/a', active: true, disabledReason: null });
    t.match(created.secret, /^whsec_/, 'the secret is returned on create');

    const read = await app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}`, headers: admin });
    t.equal(read.statusCode, 200);
    t.notOk('secret' in read.json().data, 'and never again');

    const second = await subscribe(app, { url: 'https://hooks.example.com/b', events: ['*'] });
    const page1 = await app.inject({ method: 'GET', url: '/v1/webhooks?limit=1', headers: admin });
    t.same(
      page1.json().data.webhooks.map((w: { id: string }) => w.id),
      [second.id],
      'newest first',
    );
    t.equal(page1.json().data.pagination.total, 2);
    const next = await app.inject({
      method: 'GET',
      url: `/v1/webhooks?limit=1&cursor=${page1.json().data.pagination.nextCursor}`,
      headers: admin,
    });
    t.same(
      next.json().data.webhooks.map((w: { id: string }) => w.id),
      [created.id],
      'the cursor continues',
    );

    const patched = await app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${created.id}`,
      headers: admin,
      payload: { active: false, events: ['request.created'] },
    });
    t.equal(patched.statusCode, 200);
    t.match(patched.json().data, { active: false, disabledReason: 'manual', events: ['request.created'] });

    const deleted = await app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}`, headers: admin });
    t.same(deleted.json().data, { id: created.id, deleted: true });
    const gone = await app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}`, headers: admin });
    t.equal(gone.statusCode, 404);

    // The changes are system.config_changed events on the stream (so they reach the audit log).
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(names.eventsStream, { durable_name: 'check', ack_policy: 'none' as never });
    const consumer = await jetstream(nc).consumers.get(names.eventsStream, 'check');
    const seen: { type: string; resourceId: string; changes?: Record<string, unknown> }[] = [];
    await eventually(
      async () => {
        const m = await consumer.next({ expires: 1000 });
        if (m) seen.push(decodeDomainEvent(m.data));
        return seen.filter((e) => e.resourceId === created.id).length === 3;
      },
      { what: 'three config events for the subscription' },
    );
    const mine = seen.filter((e) => e.resourceId === created.id);
    t.same(
      mine.map((e) => e.type),
      ['system.config_changed', 'system.config_changed', 'system.config_changed'],
    );
    t.same(Object.keys(mine[0].changes ?? {}).sort(), [
      'webhook.active',
      'webhook.description',
      'webhook.events',
      'webhook.url',
    ]);
    t.same(mine[2].changes, { 'webhook.deleted': { from: false, to: true } });
    t.notMatch(JSON.stringify(seen), /whsec_/, 'no event carries a secret');
  },
);

t.test('a temporary subscription (expiresAt) is deleted by housekeeping once it expires', async (t) => {
  const { app, nc, names } = await composeForTest(t, { env: { WEBHOOKS_RETENTION_SWEEP_MS: '100' } });
  const events = await eventsFrom(nc, names.eventsStream);
  const past = await app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: admin,
    payload: {
      url: 'https://hooks.example.com/t',
      events: ['*'],
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    },
  });
  t.equal(past.statusCode, 400);
  t.match(past.json().error, { code: 'VALIDATION_ERROR', message: /body\.expiresAt.*must be in the future/ });

  const expiresAt = new Date(Date.now() + 1500).toISOString();
  const temporary = await subscribe(app, { url: 'https://hooks.example.com/t', events: ['*'], expiresAt });
  t.equal(temporary.expiresAt, expiresAt, 'shown');
  const kept = await subscribe(app, {
    url: 'https://hooks.example.com/k',
    events: ['*'],
    expiresAt: new Date(Date.now() + 1500).toISOString(),
  });
  const unexpired = await app.inject({
    method: 'PATCH',
    url: `/v1/webhooks/${kept.id}`,
    headers: admin,
    payload: { expiresAt: null },
  });
  t.notOk('expiresAt' in unexpired.json().data, 'expiresAt: null makes it permanent');

  await eventually(
    async () =>
      (await app.inject({ method: 'GET', url: `/v1/webhooks/${temporary.id}`, headers: admin }))
        .statusCode === 404,
    { what: 'the expired subscription deleted', timeoutMs: 15_000 },
  );
  const still = await app.inject({ method: 'GET', url: `/v1/webhooks/${kept.id}`, headers: admin });
  t.equal(still.statusCode, 200, 'the one made permanent stays');

  const [made, gone] = await events(2, temporary.id);
  t.match(made.changes, { 'webhook.expiresAt': { from: null, to: expiresAt } });
  t.match(gone, { actor: { id: 'system' }, changes: { 'webhook.deleted': { from: false, to: true } } });
});

t.test('bad input is a 400 naming the field and changes nothing; other roles are refused', async (t) => {
  const { app } = await composeForTest(t);
  const cases: [Record<string, unknown>, string | RegExp][] = [
    [{ url: 'ftp://x.example.com/', events: ['*'] }, 'body.url'],
    [{ url: 'https://user:pw@x.example.com/', events: ['*'] }, 'body.url'],
    [{ url: 'http://10.1.2.3/hook', events: ['*'] }, 'body.url'],
    [{ url: 'http://169.254.169.254/latest/meta-data', events: ['*'] }, 'body.url'],
    [{ url: 'https://x.example.com/', events: ['nothing.here'] }, 'body.events'],
    [{ url: 'https://x.example.com/', events: ['widget.*'] }, 'body.events'],
    [{ url: 'https://x.example.com/', events: [] }, 'body.events'],
    [{ url: 'http://hooks.example.com/desk', events: ['*'] }, /body\.url.*https/],
    [{ url: 'https://hooks.example.com/desk#section', events: ['*'] }, /body\.url.*fragment/],
    [{ url: 'https://hooks.example.com/desk#', events: ['*'] }, /body\.url.*fragment/],
  ];
  for (const [body, field] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: admin, payload: body });
    t.equal(res.statusCode, 400, JSON.stringify(body));
    t.match(JSON.stringify(res.json().error), field);
  }
  const ok = await subscribe(app, { url: 'https://hooks.example.com/desk', events: ['*'] });
  const patched = await app.inject({
    method: 'PATCH',
    url: `/v1/webhooks/${ok.id}`,
    headers: admin,
    payload: { url: 'http://hooks.example.com/desk' },
  });
  t.equal(patched.statusCode, 400, 'an update to plain http is refused too');
  t.match(patched.json().error.message, /https/);
  await app.inject({ method: 'DELETE', url: `/v1/webhooks/${ok.id}`, headers: admin });
  const list = await app.inject({ method: 'GET', url: '/v1/webhooks', headers: admin });
  t.equal(list.json().data.webhooks.length, 0, 'nothing was created');
  const agent = await app.inject({
    method: 'GET',
    url: '/v1/webhooks',
    headers: asCaller(testPrincipal('agent')),
  });
  t.equal(agent.statusCode, 403, 'admin scope only');
  const unknown = await app.inject({
    method: 'GET',
    url: `/v1/webhooks/${newId('webhook')}`,
    headers: admin,
  });
  t.equal(unknown.statusCode, 404);
});

t.test(
  'plain http: to a loopback receiver the operator admits, or anywhere with WEBHOOKS_ALLOW_HTTP',
  async (t) => {
    const create = (app: Awaited<ReturnType<typeof composeForTest>>['app'], url: string) =>
      app.inject({ method: 'POST', url: '/v1/webhooks', headers: admin, payload: { url, events: ['*'] } });
    // The test stack's settings, as `npm start`'s: loopback receivers admitted (WEBHOOKS_ALLOWED_RANGES).
    const local = await composeForTest(t);
    for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'http://localhost:9/hook']) {
      t.equal(
        (await create(local.app, url)).statusCode,
        201,
        `${url}: a loopback receiver the operator admits`,
      );
    }
    t.equal(
      (await create(local.app, 'http://hooks.example.com/desk')).statusCode,
      400,
      'a public host over http',
    );
    const open = await composeForTest(t, { env: { WEBHOOKS_ALLOW_HTTP: 'true' } });
    t.equal(
      (await create(open.app, 'http://hooks.example.com/desk')).statusCode,
      201,
      'allowed by configuration',
    );
    t.equal(
      (await create(open.app, 'http://hooks.example.com/desk#x')).statusCode,
      400,
      'a fragment never, whatever the configuration',
    );
    const strict = await composeForTest(t, { env: { WEBHOOKS_ALLOWED_RANGES: '' } });
    const res = await create(strict.app, 'http://localhost:9/hook');
    t.equal(res.statusCode, 400, 'loopback over http needs the operator to admit loopback');
    t.match(res.json().error.message, /https/);
  },
);

t.test('a delivery: the event as the events API shows it, signed, verified by the library', async (t) => {
  const { app, nc, names } = await composeForTest(t);
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.*'] });
  const requestId = newId('request');
  const internal = event('request.comment_added', requestId, {
    // An event a faulty producer sent with an internal note's content: it never leaves.
    comment: {
      from: null,
      to: { id: newId('comment'), authorId: newId('user'), isInternal: true, content: 'secret' },
    },
  });
  await publish(nc, names, [event('user.created', newId('user')), internal]);
  await eventually(() => receiver.received.length === 1, { what: 'one delivery (user.* is not subscribed)' });
  const got = receiver.received[0];
  const verified = new Webhook(sub.secret).verify(got.body, got.headers) as Record<string, unknown>;
  t.match(verified, {
    id: internal.id,
    type: 'request.comment_added',
    resourceId: requestId,
    webhookId: sub.id,
  });
  t.match(verified, { actor: { role: 'system' }, metadata: { source: 'system' } }, 'the single-read shape');
  t.notMatch(got.body, /secret/, 'internal-note content never appears');
  t.throws(() =>
    new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(got.body, got.headers),
  );

  const log = await eventually(async () => {
    const d = await deliveries(app, sub.id);
    return d[0]?.status === 'succeeded' && d;
  });
  t.equal(log.length, 1);
  t.equal(log[0].id, got.headers['webhook-id'], 'the delivery id is the webhook-id');
  t.match(log[0].attempts, [{ status: 204, error: null }]);
  t.equal(log[0].nextAttemptAt, null);

  // The same event again (JetStream redelivery, a producer's retry): no second delivery.
  // Published without a message id, so JetStream's own de-duplication does not hide it.
  await publishSigned(nc, names.eventSubject(internal.type), encodeJson(internal), { as: 'requests' });
  const pinged = await app.inject({ method: 'POST', url: `/v1/webhooks/${sub.id}/ping`, headers: admin });
  t.equal(pinged.statusCode, 202);
  await eventually(() => receiver.received.length === 2, { what: 'the ping' });
  t.match(JSON.parse(receiver.received[1].body), { type: 'webhook.ping', webhookId: sub.id });
  const filtered = await deliveries(app, sub.id, '?eventType=webhook.ping');
  t.same(
    filtered.map((d) => d.eventType),
    ['webhook.ping'],
    'filtered by event type',
  );
  const bad = await app.inject({
    method: 'GET',
    url: `/v1/webhooks/${sub.id}/deliveries?status=nope`,
    headers: admin,
  });
  t.equal(bad.statusCode, 400);
  t.equal(receiver.received.length, 2, 'no duplicate of the redelivered event');
});

t.test('overload: lists past their limit are refused at once; reads go on', async (t) => {
  const conn = await testCountedMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const { app } = await composeForTest(t, {
    env: { LIST_CONCURRENCY: '1' },
    shared: { conn, nc, names, key: secretKey() },
    start: false,
  });
  const hook = await subscribe(app, { url: 'https://hooks.example.com/busy', events: ['*'] });
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { ...admin, ...headers } });
  for (const url of ['/v1/webhooks?limit=5', `/v1/webhooks/${hook.id}/deliveries`])
    checkBurst(
      t,
      await burstPastLimit(
        () => get(url),
        () => get(`/v1/webhooks/${hook.id}`),
      ),
      /lists/,
    );
  t.equal((await get('/v1/webhooks')).statusCode, 200, 'every slot is given back once answered');
  await checkListDeadline(t, conn, 'subscriptions', (headers) => get('/v1/webhooks', headers));
});

t.test('every list query the repository builds is answered from a declared index (MongoDB)', async (t) => {
  const conn = await testCountedMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const { app, service } = await composeForTest(t, {
    shared: { conn, nc, names, key: secretKey() },
    start: false,
  });
  const hooks = [
    await subscribe(app, { url: 'https://hooks.example.com/c1', events: ['*'] }),
    await subscribe(app, { url: 'https://hooks.example.com/c2', events: ['*'] }),
  ];
  // A log over two days, so the walk reads hours and days.
  await storeDeliveries(
    service,
    hooks[0]!.id,
    [2, 1, 0].map((n) => Date.now() - n * DAY),
  );
  const get = (url: string) => app.inject({ method: 'GET', url, headers: admin });
  const log = `/v1/webhooks/${hooks[0]!.id}/deliveries`;
  const paths = [
    '/v1/webhooks?limit=1',
    `${log}?limit=1`,
    `${log}?limit=1&status=succeeded`,
    `${log}?limit=1&status=pending,succeeded,failed`,
    `${log}?limit=1&eventType=request.updated`,
    `${log}?limit=1&eventType=request.created,request.updated`,
    `${log}?limit=1&page=2`,
  ];
  const queries = { subscriptions: [] as ListQuery[], deliveries: [] as ListQuery[] };
  for (const collection of ['subscriptions', 'deliveries'] as const)
    queries[collection] = await listQueriesOf(conn, collection, async () => {
      for (const path of paths) {
        const first = await get(path);
        t.equal(first.statusCode, 200, path);
        const next = first.json().data.pagination.nextCursor;
        if (next) await get(`${path}&cursor=${next}`);
      }
    });
  // The schemas as the service registered them on its connection.
  const schemaOf = (collection: string) =>
    Object.values(conn.models).find((m) => m.collection.name === collection)!.schema;
  t.ok(queries.deliveries.length > 0, `${queries.deliveries.length} delivery queries seen`);
  t.same(
    uncovered(queries.subscriptions, declaredIndexes(schemaOf('subscriptions'))),
    [],
    'subscriptions: indexed',
  );
  t.same(uncovered(queries.deliveries, declaredIndexes(schemaOf('deliveries'))), [], 'deliveries: indexed');
});

/**
 * Finished deliveries of a subscription made at `times` (alternately `request.updated` and
 * `request.created`), stored as the service stores them (`insertNew`).
 */
async function storeDeliveries(
  service: Awaited<ReturnType<typeof composeForTest>>['service'],
  subscriptionId: string,
  times: number[],
) {
  const docs = times.map((ms, n) => {
    const at = new Date(ms);
    const id = newId('delivery', at.getTime());
    const type = n % 2 ? 'request.created' : 'request.updated';
    return {
      ...pendingDelivery(
        id,
        subscriptionId,
        { id: null, type },
        `${subscriptionId}|x:${id}`,
        `${at.toISOString()}|${id}`,
        {},
        at,
      ),
      status: 'succeeded' as const,
      nextAttemptAt: null,
      dueMinute: null,
    };
  });
  for (let n = 0; n < docs.length; n += 500) await service.deps.deliveries.insertNew(docs.slice(n, n + 500));
  return docs.map((d) => d._id);
}

t.test('every delivery log page is read through an index on PostgreSQL (FerretDB plans)', async (t) => {
  const conn = await testCountedMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const { app, service } = await composeForTest(t, {
    shared: { conn, nc, names, key: secretKey() },
    start: false,
  });
  // The service's indexes (its start makes them), so the store has the GIN indexes beside them.
  await ensureIndexes(conn);
  const [busy, quiet] = [
    await subscribe(app, { url: 'https://hooks.example.com/busy', events: ['*'] }),
    await subscribe(app, { url: 'https://hooks.example.com/quiet', events: ['*'] }),
  ];
  // Enough rows that PostgreSQL plans as for a real table, two an hour over 62 days (a step that
  // matches a large part of the table is rightly read in full: a day must be a small part).
  await storeDeliveries(
    service,
    busy.id,
    Array.from({ length: 3000 }, (_, n) => Date.now() - (3000 - n) * 30 * MINUTE),
  );
  await storeDeliveries(
    service,
    quiet.id,
    [3, 2, 1].map((n) => Date.now() - n * DAY),
  );
  const get = (url: string) => app.inject({ method: 'GET', url, headers: admin });
  // Each page is read an hour or a day at a time: the step's equality, the subscription's and the
  // filter's one-value equalities pushed down as GIN lookups, cursor pages and deep pages
  // included; several values are checked on that step's rows.
  const filters = [
    '',
    'status=succeeded',
    'status=pending,failed',
    'eventType=request.updated',
    'eventType=request.created,request.updated',
    'status=succeeded&eventType=request.created',
  ];
  const queries = await listQueriesOf(conn, 'deliveries', async () => {
    for (const hook of [busy, quiet])
      for (const f of filters)
        for (const paging of ['limit=1', 'limit=5&page=40']) {
          const log = `/v1/webhooks/${hook.id}/deliveries?${f}`;
          const first = await get(`${log}&${paging}`);
          t.equal(first.statusCode, 200, `${log}&${paging}`);
          const next = first.json().data.pagination.nextCursor;
          if (next) t.equal((await get(`${log}&limit=1&cursor=${next}`)).statusCode, 200);
        }
  });
  const { sample, shapes } = firstOfEachShape(queries);
  t.comment(`${queries.length} queries, ${shapes} shapes`);
  // A cursor page's seek is a bound on `_id` (a whole delivery id) inside the step's range.
  const seeks = (q: ListQuery) => /"\$(lt|gt)":"dlv_\w{26}"/.test(JSON.stringify(q.filter));
  await checkIndexedPlans(t, conn, 'deliveries', sample, filters.length * 2, seeks);
});

t.test('deliveries stored before the list keys get them at start; a call reads a bounded span', async (t) => {
  const conn = await testMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const shared = { conn, nc, names, key: secretKey() };
  const { app, service } = await composeForTest(t, { shared, start: false });
  const hook = await subscribe(app, { url: 'https://hooks.example.com/old', events: ['request.*'] });
  // As an older release stored them (no list keys): the newest two 80 days apart, the oldest 180
  // days before them. A call reads 120 steps: the hour it starts in, the rest of that day (one
  // probe, when the hour holds none), then a day a step, so each call covers 118 or 119 days past
  // its first. These gaps split the calls as asserted below (reading back from the oldest, the
  // first call ends 141-142 days ago, the second 23-24: the middle one and never the newest).
  const ids = await storeDeliveries(
    service,
    hook.id,
    [260, 80, 0].map((n) => Date.now() - n * DAY),
  );
  await conn.collection('deliveries').updateMany({}, { $unset: { idHour: '', idDay: '' } });
  await conn.collection('listBounds').deleteMany({});
  await composeForTest(t, { shared, start: true });
  const keys = await conn
    .collection('deliveries')
    .find({}, { projection: { idDay: 1 } })
    .toArray();
  t.equal(
    keys.filter((k) => typeof k.idDay === 'string' && k.idDay.length === 10).length,
    3,
    'every delivery has its keys',
  );

  const log = `/v1/webhooks/${hook.id}/deliveries?limit=2`;
  const get = async (url: string) => (await app.inject({ method: 'GET', url, headers: admin })).json().data;
  const idsOf = (page: { deliveries: { id: string }[] }) => page.deliveries.map((d) => d.id);
  const first = await get(log);
  t.same(idsOf(first), [ids[2], ids[1]], 'the page, once full, answers');
  const second = await get(`${log}&cursor=${first.pagination.nextCursor}`);
  t.same(idsOf(second), [], 'nothing in the span one call reads');
  t.same(
    [second.pagination.hasMore, typeof second.pagination.nextCursor],
    [true, 'string'],
    'the answer says where to go on',
  );
  const third = await get(`${log}&cursor=${second.pagination.nextCursor}`);
  t.same(idsOf(third), [ids[0]], 'the next call goes on from there');
  t.same([third.pagination.hasMore, third.pagination.nextCursor], [false, null], 'the end');
  // Reading back from the oldest: calls that read their span empty, each with a way on.
  const back: string[] = [];
  let prev = third.pagination.prevCursor as string | null;
  for (let n = 0; n < 5 && prev; n++) {
    const page = await get(`${log}&cursor=${prev}`);
    back.push(...idsOf(page));
    prev = page.pagination.prevCursor;
  }
  t.same(back, [ids[1], ids[2]], 'and back to the newest, a call at a time');
  const forged = await app.inject({
    method: 'GET',
    url: `${log}&cursor=${first.pagination.nextCursor.replace(/^./, 'x')}`,
    headers: admin,
  });
  t.equal(forged.statusCode, 400, 'a cursor this list did not issue is a 400');
});
