import { type DomainEvent, EVENT_TYPES, newId } from '@support-desk/contracts';
import {
  asCaller,
  burstPastLimit,
  checkBurst,
  checkIndexedPlans,
  firstOfEachShape,
  checkListDeadline,
  declaredIndexes,
  listQueriesOf,
  testCountedMongo,
  testMongo,
  testPrincipal,
  uncovered,
} from '@support-desk/platform/testing';
import { walkBounds } from '@support-desk/platform/store';
import t from 'tap';
import { toStoredEvent } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';
import { EVENTS_SPAN } from '../src/store/event-queries.js';
import { actors, makeEvent, prepareStore, composeForTest } from './helpers.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const NDJSON = 'application/x-ndjson';
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

t.test('events API', async (t) => {
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const { app } = await composeForTest(t, conn);

  const requestA = newId('request');
  const requestB = newId('request');
  const userX = newId('user');
  // 30 events at known times: minute i. Two share minute 29 to exercise the id tiebreak.
  const events: DomainEvent[] = [];
  const push = (e: DomainEvent) => events.push(e);
  push(makeEvent('request.created', { resourceId: requestA, actor: actors.agent, at: at(0) }));
  push(
    makeEvent('request.status_changed', {
      resourceId: requestA,
      actor: actors.agent,
      changes: { status: { from: 'open', to: 'in_progress' } },
      at: at(1),
    }),
  );
  push(
    makeEvent('request.assigned', {
      resourceId: requestA,
      actor: actors.admin,
      changes: { assignedTo: { from: null, to: userX } },
      at: at(2),
    }),
  );
  push(makeEvent('request.created', { resourceId: requestB, actor: actors.viewer, at: at(3) }));
  push(makeEvent('user.created', { resourceId: userX, actor: actors.admin, at: at(4) }));
  push(makeEvent('user.login', { resourceId: userX, actor: actors.viewer, at: at(5) }));
  const slaChanges = {
    'sla.responseStatus': { from: 'on_track', to: 'at_risk' },
    'sla.responseTarget': { from: null, to: at(60).toISOString() },
  };
  push(makeEvent('system.sla_warning', { resourceId: requestA, at: at(6), changes: slaChanges }));
  for (let i = 7; i < 27; i++)
    push(makeEvent('user.login', { resourceId: userX, actor: actors.viewer, at: at(i) }));
  push(makeEvent('request.comment_added', { resourceId: requestA, actor: actors.agent, at: at(28) }));
  push(makeEvent('request.updated', { resourceId: requestB, actor: actors.agent, at: at(29) }));
  push(makeEvent('request.deleted', { resourceId: requestB, actor: actors.admin, at: at(29) }));
  await eventModel(conn).collection.insertMany(events.map((e) => toStoredEvent(e)) as never[]);

  const admin = asCaller(testPrincipal('admin'));
  const agent = asCaller(testPrincipal('agent'));
  const viewer = asCaller(testPrincipal('viewer'));
  const get = async (url: string, headers = admin) => {
    const res = await app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  const ids = (body: { data: { events: { id: string }[] } }) => body.data.events.map((e) => e.id);
  const newestFirst = [...events]
    .sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.id.localeCompare(a.id))
    .map((e) => e.id);

  t.test('list: newest first, list shape, pagination', async (t) => {
    const { status, body } = await get('/v1/events');
    t.equal(status, 200);
    t.equal(body.success, true);
    t.same(ids(body), newestFirst.slice(0, 20), 'timestamp desc, id desc on ties');
    const { nextCursor, ...pagination } = body.data.pagination;
    t.same(pagination, { page: 1, limit: 20, total: 30, pages: 2, hasMore: true });
    t.match(nextCursor, /^[A-Za-z0-9_-]+$/, 'page mode also gives the cursor after the page');
    const assigned = body.data.events.find((e: { type: string }) => e.type === 'request.assigned');
    t.notOk(assigned, 'older events are on page 2');
    const first = body.data.events[0];
    t.same(Object.keys(first.actor).sort(), ['email', 'id', 'name'], 'list actor has no role');
    t.notOk('metadata' in first, 'no metadata in lists');
    t.notOk('changes' in first, 'changes absent when nothing changed');
    t.equal(first.ipAddress, '203.0.113.7', 'ipAddress when known');
    const sla = (await get('/v1/events?type=system.sla_warning')).body.data.events[0];
    t.notOk('ipAddress' in sla, 'no ipAddress for system events');
    t.same(sla.changes, slaChanges, 'dotted field names in changes come back as written');
  });

  t.test('pagination boundaries and hasMore', async (t) => {
    const p2 = (await get('/v1/events?page=2')).body;
    t.same(ids(p2), newestFirst.slice(20, 30));
    t.same(p2.data.pagination, { page: 2, limit: 20, total: 30, pages: 2, hasMore: false, nextCursor: null });
    const exact = (await get('/v1/events?limit=15&page=2')).body.data.pagination;
    t.same(
      exact,
      { page: 2, limit: 15, total: 30, pages: 2, hasMore: false, nextCursor: null },
      'last full page: no more',
    );
    t.equal((await get('/v1/events?limit=15&page=1')).body.data.pagination.hasMore, true);
    const beyond = (await get('/v1/events?page=9')).body;
    t.same(beyond.data.events, []);
    t.same(beyond.data.pagination, {
      page: 9,
      limit: 20,
      total: 30,
      pages: 2,
      hasMore: false,
      nextCursor: null,
    });
    t.equal((await get('/v1/events?limit=500')).body.data.pagination.limit, 100, 'limit clamped to 100');
    t.equal((await get('/v1/events?limit=100')).body.data.events.length, 30);
    const empty = (await get('/v1/events?resourceId=nothing')).body.data.pagination;
    t.same(empty, { page: 1, limit: 20, total: 0, pages: 0, hasMore: false, nextCursor: null });
  });

  t.test('every filter alone', async (t) => {
    const only = async (q: string, pred: (e: DomainEvent) => boolean) => {
      const { status, body } = await get(`/v1/events?limit=100&${q}`);
      t.equal(status, 200, q);
      t.same(
        ids(body),
        newestFirst.filter((id) => pred(events.find((e) => e.id === id)!)),
        q,
      );
      t.ok(body.data.events.length > 0, `${q} matches something`);
    };
    await only('type=request.created', (e) => e.type === 'request.created');
    await only('resourceType=request', (e) => e.resourceType === 'request');
    await only('resourceType=system', (e) => e.resourceType === 'system');
    await only(`resourceId=${requestB}`, (e) => e.resourceId === requestB);
    await only(`userId=${actors.admin.id}`, (e) => e.actor.id === actors.admin.id);
    await only('actor.role=viewer', (e) => e.actor.role === 'viewer');
    await only('actorRole=admin', (e) => e.actor.role === 'admin');
    await only('actor.role=system', (e) => e.actor.role === 'system');
    await only(`since=${at(28).toISOString()}`, (e) => e.timestamp >= at(28).toISOString());
    await only(`until=${at(2).toISOString()}`, (e) => e.timestamp < at(2).toISOString());
  });

  t.test('comma-separated types and combined filters', async (t) => {
    const multi = (await get('/v1/events?limit=100&type=request.created,request.deleted, user.created')).body;
    t.same(
      ids(multi),
      newestFirst.filter((id) =>
        ['request.created', 'request.deleted', 'user.created'].includes(
          events.find((e) => e.id === id)!.type,
        ),
      ),
    );
    t.equal(multi.data.events.length, 4);
    const dup = (await get('/v1/events?type=user.created,user.created')).body;
    t.equal(dup.data.pagination.total, 1, 'repeated type counts once');

    const combined = (
      await get(
        `/v1/events?resourceType=request&resourceId=${requestA}&userId=${actors.agent.id}&actor.role=agent` +
          `&type=request.created,request.comment_added,request.status_changed&since=${at(1).toISOString()}&until=${at(28).toISOString()}`,
      )
    ).body;
    t.same(
      combined.data.events.map((e: { type: string }) => e.type),
      ['request.status_changed'],
      'all filters AND-ed',
    );
    const roleAndType = (await get('/v1/events?actorRole=viewer&type=request.created')).body;
    t.same(ids(roleAndType), [events[3].id]);
  });

  t.test('since is inclusive, until exclusive', async (t) => {
    const edge = at(5).toISOString();
    const since = (await get(`/v1/events?limit=100&since=${edge}&until=${at(6).toISOString()}`)).body;
    t.same(ids(since), [events[5].id], 'an event exactly at since is in; one exactly at until is out');
    const withOffset = (
      await get(
        `/v1/events?since=${encodeURIComponent('2026-01-01T01:05:00+01:00')}&until=${at(6).toISOString()}`,
      )
    ).body;
    t.same(ids(withOffset), [events[5].id], 'offsets are honoured');
    const ms = (
      await get(
        `/v1/events?since=${new Date(T0 + 5 * 60_000 + 1).toISOString()}&until=${at(6).toISOString()}`,
      )
    ).body;
    t.same(ids(ms), [], 'one millisecond later excludes it');
  });

  t.test('single read: metadata and actor.role; 404; malformed id', async (t) => {
    const e = events[2];
    const { status, body } = await get(`/v1/events/${e.id}`);
    t.equal(status, 200);
    t.same(body.data, {
      id: e.id,
      type: 'request.assigned',
      resourceType: 'request',
      resourceId: requestA,
      actor: actors.admin,
      changes: { assignedTo: { from: null, to: userX } },
      metadata: e.metadata,
      timestamp: e.timestamp,
      ipAddress: '203.0.113.7',
    });
    const missing = await get(`/v1/events/${newId('event')}`);
    t.equal(missing.status, 404);
    t.equal(missing.body.error.code, 'NOT_FOUND');
    const bad = await get('/v1/events/not-an-id');
    t.equal(bad.status, 404, 'a malformed id names no event: 404 like an unknown one');
    t.equal(bad.body.error.code, 'NOT_FOUND');
    t.match(bad.body.error.message, /event ids look like evt_/);
  });

  t.test('events of one request: oldest first, no pagination', async (t) => {
    const { status, body } = await get(`/v1/requests/${requestA}/events`, viewer);
    t.equal(status, 200);
    t.same(Object.keys(body.data), ['events'], 'no pagination object');
    t.same(
      body.data.events.map((e: { type: string }) => e.type),
      ['request.created', 'request.status_changed', 'request.assigned', 'request.comment_added'],
      'oldest first; the SLA warning is filed under system, not the request',
    );
    const status0 = body.data.events[1];
    t.same(Object.keys(status0).sort(), ['actor', 'changes', 'id', 'timestamp', 'type']);
    t.same(status0.changes, { status: { from: 'open', to: 'in_progress' } });
    t.notOk('changes' in body.data.events[0]);
    const none = await get(`/v1/requests/${newId('request')}/events`, agent);
    t.equal(none.status, 404, 'unknown request: 404, not an empty list');
    t.equal(none.body.error.code, 'NOT_FOUND');
    const noneForAdmin = await get(`/v1/requests/${newId('request')}/events`, admin);
    t.equal(noneForAdmin.status, 404, 'unknown request: 404 to an admin too');
    t.equal((await get('/v1/requests/usr_x/events')).status, 404, 'malformed request id: 404');
  });

  t.test("a deleted request's history: 404 like the request, except to an admin", async (t) => {
    for (const [who, headers] of [
      ['agent', agent],
      ['viewer', viewer],
    ] as const) {
      const res = await get(`/v1/requests/${requestB}/events`, headers);
      t.equal(res.status, 404, who);
      t.same(res.body.error, {
        code: 'NOT_FOUND',
        message: 'Request not found',
        requestId: res.headers['x-request-id'],
      });
    }
    const kept = await get(`/v1/requests/${requestB}/events`, admin);
    t.equal(kept.status, 200, 'admin: kept for audit');
    t.same(
      kept.body.data.events.map((e: { type: string }) => e.type),
      ['request.created', 'request.updated', 'request.deleted'],
    );
    t.equal((await get(`/v1/requests/${requestA}/events`, agent)).status, 200, 'a live request as before');
  });

  t.test('bad query values are 400 naming the field', async (t) => {
    const cases: [string, RegExp][] = [
      ['type=request.exploded', /query\.type/],
      ['type=request.created,,user.login', /query\.type/],
      ['type=', /query\.type/],
      ['resourceType=ticket', /query\.resourceType/],
      ['actor.role=owner', /query\.actor\.role/],
      ['actorRole=root', /query\.actorRole/],
      ['actor.role=admin&actorRole=agent', /query\.actorRole/],
      ['since=yesterday', /query\.since/],
      ['until=2026-13-01T00:00:00Z', /query\.until/],
      [`since=${at(5).toISOString()}&until=${at(5).toISOString()}`, /query\.until/],
      ['page=0', /query\.page/],
      ['page=1e300', /query\.page/],
      ['page=1.5', /query\.page/],
      ['limit=0', /query\.limit/],
      ['limit=ten', /query\.limit/],
      ['usrId=x', /query\.usrId/],
    ];
    for (const [q, field] of cases) {
      const { status, body } = await get(`/v1/events?${q}`);
      t.equal(status, 400, q);
      t.equal(body.error?.code, 'VALIDATION_ERROR', q);
      t.match(body.error?.message, field, q);
    }
    t.ok(EVENT_TYPES.length === 20);
  });

  t.test('permissions', async (t) => {
    for (const [who, headers] of [
      ['viewer', viewer],
      ['agent', agent],
    ] as const) {
      t.equal((await get('/v1/events', headers)).status, 403, `${who} cannot list events`);
      t.equal((await get(`/v1/events/${events[0].id}`, headers)).status, 403, `${who} cannot read one`);
      t.equal((await get('/v1/events?type=bogus', headers)).status, 403, `${who}: 403 before validation`);
      t.equal(
        (await get(`/v1/requests/${requestA}/events`, headers)).status,
        200,
        `${who} reads request events`,
      );
    }
    const noRead = asCaller(testPrincipal('viewer', { scopes: ['users:read'] }));
    const denied = await get(`/v1/requests/${requestA}/events`, noRead);
    t.equal(denied.status, 403, 'requests:read needed');
    t.equal(denied.body.error.code, 'FORBIDDEN');
    const apiKeyAdmin = asCaller(testPrincipal('admin', { scopes: ['requests:read'] }));
    t.equal(
      (await get('/v1/events', apiKeyAdmin)).status,
      403,
      'an admin credential without the admin scope',
    );
    const anonymous = await app.inject({ method: 'GET', url: '/v1/events' });
    t.equal(anonymous.statusCode, 401);
    const forged = await app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { 'x-sd-principal': 'x.y.z' },
    });
    t.equal(forged.statusCode, 401);
  });

  t.test('no write routes', async (t) => {
    for (const method of ['POST', 'PATCH', 'DELETE', 'PUT'] as const) {
      const res = await app.inject({ method, url: `/v1/events/${events[0].id}`, headers: admin });
      t.equal(res.statusCode, 404, `${method} /v1/events/:id`);
      t.equal((await app.inject({ method, url: '/v1/events', headers: admin })).statusCode, 404);
    }
    t.equal(await eventModel(conn).countDocuments(), 30);
  });
});

t.test(
  "the trash: a restored request's history is readable again; a purged one's is the admin's",
  async (t) => {
    const conn = await testMongo(t, 'audit');
    await prepareStore(conn);
    const { app } = await composeForTest(t, conn);
    const [restored, deletedAgain, purged] = [newId('request'), newId('request'), newId('request')];
    const history: [string, DomainEvent['type'][]][] = [
      [restored, ['request.created', 'request.deleted', 'request.restored']],
      [deletedAgain, ['request.created', 'request.deleted', 'request.restored', 'request.deleted']],
      [purged, ['request.created', 'request.deleted', 'request.purged']],
    ];
    const events = history.flatMap(([id, types]) =>
      types.map((type, n) => makeEvent(type, { resourceId: id, actor: actors.admin, at: at(n) })),
    );
    await eventModel(conn).collection.insertMany(events.map((e) => toStoredEvent(e)) as never[]);
    const status = async (id: string, role: 'admin' | 'agent', query = '') =>
      (
        await app.inject({
          method: 'GET',
          url: `/v1/requests/${id}/events${query}`,
          headers: asCaller(testPrincipal(role)),
        })
      ).statusCode;
    for (const query of ['', '?limit=1']) {
      t.equal(await status(restored, 'agent', query), 200, `restored: readable again ${query}`);
      t.equal(await status(deletedAgain, 'agent', query), 404, `deleted after a restore: 404 ${query}`);
      t.equal(await status(purged, 'agent', query), 404, `purged: 404 ${query}`);
      t.equal(await status(purged, 'admin', query), 200, `purged: kept for audit ${query}`);
    }
  },
);

t.test('events stored before the list keys get them at start; a call reads a bounded span', async (t) => {
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const DAY = 86_400_000;
  // As an older release stored them: no day, no top-level actor; 200 days apart (more days
  // than one call reads), a third event of someone else in between.
  const [old, recent, other] = [
    makeEvent('request.updated', { actor: actors.agent, at: at(0) }),
    makeEvent('request.updated', { actor: actors.agent, at: new Date(T0 + 200 * DAY) }),
    makeEvent('user.login', { actor: actors.viewer, at: new Date(T0 + 100 * DAY) }),
  ];
  const legacy = [old, recent, other].map((e) => {
    const { day: _d, actorId: _a, actorRole: _r, ...doc } = toStoredEvent(e);
    return doc;
  });
  await eventModel(conn).collection.insertMany(legacy as never[]);
  await composeForTest(t, conn, { start: true });
  const keys = await eventModel(conn).find({}, { day: 1, actorId: 1, actorRole: 1 }).lean();
  t.same(
    keys.map((k) => [k.day, k.actorId, k.actorRole]).sort(),
    [
      ['2026-01-01', actors.agent.id, 'agent'],
      ['2026-04-11', actors.viewer.id, 'viewer'],
      ['2026-07-20', actors.agent.id, 'agent'],
    ],
    'every stored event has its list keys',
  );
  // A second process, started after: its lists find them (the span was kept at the first start).
  const { app } = await composeForTest(t, conn);
  const get = async (url: string) =>
    (await app.inject({ method: 'GET', url, headers: asCaller(testPrincipal('admin')) })).json();
  const mine = `/v1/events?userId=${actors.agent.id}`;
  const first = await get(mine);
  t.same(
    first.data.events.map((e: { id: string }) => e.id),
    [recent.id],
    'the newest day hour by hour, then as many days as one call reads',
  );
  const p = first.data.pagination;
  t.same(
    [p.total, p.totalCapped, p.hasMore, typeof p.nextCursor],
    [1, true, true, 'string'],
    'the count is a lower bound, and the answer says where to go on',
  );
  const second = await get(`${mine}&cursor=${p.nextCursor}`);
  t.same(
    second.data.events.map((e: { id: string }) => e.id),
    [old.id],
    'the next call goes on from where the first stopped',
  );
  t.same([second.data.pagination.hasMore, second.data.pagination.nextCursor], [false, null], 'the end');
  const all = await get('/v1/events?limit=5');
  t.same(
    all.data.events.map((e: { id: string }) => e.id),
    [recent.id, other.id],
    'a page is answered as soon as it is full or the call has read its steps',
  );
});

t.test("a page's count stops a few days past a full page, and says so", async (t) => {
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const DAY = 86_400_000;
  // One of the agent's events a day for ten days.
  const daily = Array.from({ length: 10 }, (_, d) =>
    makeEvent('request.updated', { actor: actors.agent, at: new Date(T0 + 9 * 3_600_000 + d * DAY) }),
  );
  await eventModel(conn).collection.insertMany(daily.map((e) => toStoredEvent(e)) as never[]);
  const { app } = await composeForTest(t, conn, { start: true });
  const get = async (url: string) =>
    (await app.inject({ method: 'GET', url, headers: asCaller(testPrincipal('admin')) })).json();
  const mine = `/v1/events?userId=${actors.agent.id}`;
  const whole = (await get(`${mine}&limit=20`)).data.pagination;
  t.same(
    [whole.total, whole.totalCapped, whole.hasMore],
    [10, undefined, false],
    'counted with the page: exact',
  );
  const short = await get(`${mine}&limit=1`);
  const p = short.data.pagination;
  t.ok(p.total > 1 && p.total < 10, `a lower bound (${p.total})`);
  t.same([p.totalCapped, p.hasMore, typeof p.nextCursor], [true, true, 'string'], 'says so, with a way on');
  const last = await get(`${mine}&limit=1&page=10`);
  t.same(
    last.data.events.map((e: { id: string }) => e.id),
    [daily[0]!.id],
    'the pages past the bound still answer',
  );
});

t.test('overload: lists and exports past their limits are refused at once; reads go on', async (t) => {
  const conn = await testCountedMongo(t, 'audit');
  await prepareStore(conn);
  const { app } = await composeForTest(t, conn, {
    env: { LIST_CONCURRENCY: '1', EXPORT_CONCURRENCY: '1' },
  });
  const stored = Array.from({ length: 5 }, (_, i) =>
    makeEvent('user.login', { resourceId: newId('user'), actor: actors.viewer, at: at(i) }),
  );
  await eventModel(conn).collection.insertMany(stored.map((e) => toStoredEvent(e)) as never[]);
  const admin = asCaller(testPrincipal('admin'));
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { ...admin, ...headers } });
  const list = () => get('/v1/events?type=user.login');
  const exportAll = () => get('/v1/events/export', { accept: 'application/x-ndjson' });
  checkBurst(t, await burstPastLimit(list, () => get(`/v1/events/${stored[0]!.id}`)), /lists/);
  checkBurst(t, await burstPastLimit(exportAll, list, 4), /exports/);
  t.equal((await get('/v1/events')).statusCode, 200, 'every slot is given back once answered');
  await checkListDeadline(t, conn, 'events', (headers) => get('/v1/events', headers));
});

t.test('every list query the repository builds is answered from a declared index (MongoDB)', async (t) => {
  const conn = await testCountedMongo(t, 'audit');
  await prepareStore(conn);
  const { app } = await composeForTest(t, conn);
  const resource = newId('request');
  const stored = [0, 1, 2].map((i) =>
    makeEvent('request.updated', { resourceId: resource, actor: actors.agent, at: at(i) }),
  );
  await eventModel(conn).collection.insertMany(stored.map((e) => toStoredEvent(e)) as never[]);
  const admin = asCaller(testPrincipal('admin'));
  const get = (url: string) => app.inject({ method: 'GET', url, headers: admin });
  const filters = [
    '',
    'type=request.updated',
    'type=request.updated,request.created',
    'resourceType=request',
    `resourceType=request&resourceId=${resource}`,
    `resourceId=${resource}`,
    `userId=${actors.agent.id}`,
    'actorRole=agent',
    'actorRole=agent,admin',
    `type=request.updated&userId=${actors.agent.id}`,
    `since=${at(0).toISOString()}&until=${at(9).toISOString()}`,
  ];
  const queries = await listQueriesOf(conn, 'events', async () => {
    for (const f of filters) {
      const query = [f, 'limit=1'].filter(Boolean).join('&');
      const first = await get(`/v1/events?${query}`);
      t.equal(first.statusCode, 200, query);
      const next = first.json().data.pagination.nextCursor;
      if (next) await get(`/v1/events?${query}&cursor=${next}`);
    }
    t.equal((await get(`/v1/requests/${resource}/events?limit=1`)).statusCode, 200);
    // The export (no Accept: NDJSON), walked oldest first.
    for (const f of ['', `?userId=${actors.agent.id}`, '?type=request.updated,request.created'])
      t.equal((await get(`/v1/events/export${f}`)).statusCode, 200, `export ${f}`);
  });
  t.ok(queries.length > filters.length, `${queries.length} queries seen`);
  t.same(uncovered(queries, declaredIndexes(eventModel(conn).schema)), [], 'no scan, no sort in memory');
});

t.test(
  'every events list page and export is read through an index on PostgreSQL (FerretDB plans)',
  async (t) => {
    const conn = await testCountedMongo(t, 'audit');
    await prepareStore(conn);
    const { app } = await composeForTest(t, conn);
    // An older log, straight into the store (the lists' span widened as the service's inserts do):
    // enough rows that PostgreSQL plans as for a real table, two an hour over 104 days (a step
    // that matches a third of the table is rightly read in full: a day must be a small part).
    const older = Array.from({ length: 5000 }, (_, i) =>
      toStoredEvent(
        makeEvent('user.login', { actor: actors.viewer, at: new Date(T0 - (i + 1) * 30 * 60_000) }),
      ),
    );
    for (let n = 0; n < older.length; n += 1000)
      await eventModel(conn).collection.insertMany(older.slice(n, n + 1000) as never[]);
    const resource = newId('request');
    const recent = [0, 1, 2].map((i) =>
      makeEvent('request.updated', { resourceId: resource, actor: actors.agent, at: at(i) }),
    );
    await eventModel(conn).collection.insertMany(recent.map((e) => toStoredEvent(e)) as never[]);
    await walkBounds(conn).stored(EVENTS_SPAN, [older.at(-1)!.timestamp.getTime(), at(2).getTime()]);
    const admin = asCaller(testPrincipal('admin'));
    const get = (url: string, accept = 'application/json') =>
      app.inject({ method: 'GET', url, headers: { ...admin, accept } });
    // Each page is read an hour or a day at a time: the step's equality (and the filter's one-value
    // equalities, the actor's id and role among them) pushed down as GIN lookups, cursor pages
    // included; what is not pushed down (several values, a time range) is checked on that step.
    const filters = [
      '',
      'type=request.updated',
      'type=request.updated,user.login',
      'resourceType=request',
      'resourceType=request,user',
      `resourceType=request&resourceId=${resource}`,
      `resourceId=${resource}`,
      `userId=${actors.agent.id}`,
      `userId=${actors.viewer.id}`,
      'actorRole=viewer',
      'actorRole=agent,admin',
      `type=request.updated&userId=${actors.agent.id}`,
      `since=${new Date(T0 - 30 * 3_600_000).toISOString()}`,
      `since=${new Date(T0 - 30 * 3_600_000).toISOString()}&until=${new Date(T0 - 3_600_000).toISOString()}`,
    ];
    const queries = await listQueriesOf(conn, 'events', async () => {
      for (const f of filters) {
        for (const paging of ['limit=1', 'limit=5&page=40']) {
          const query = [f, paging].filter(Boolean).join('&');
          const first = await get(`/v1/events?${query}`);
          t.equal(first.statusCode, 200, query);
          const next = first.json().data.pagination.nextCursor;
          if (next) t.equal((await get(`/v1/events?${f}&limit=1&cursor=${next}`)).statusCode, 200);
        }
        const exported = await get(`/v1/events/export?${[f, 'limit=3'].filter(Boolean).join('&')}`, NDJSON);
        t.equal(exported.statusCode, 200, `export ${f}`);
      }
      t.equal((await get(`/v1/requests/${resource}/events?limit=1`)).statusCode, 200);
    });
    const { sample, shapes } = firstOfEachShape(queries);
    t.comment(`${queries.length} queries, ${shapes} shapes`);
    await checkIndexedPlans(t, conn, 'events', sample, filters.length * 2);
  },
);
