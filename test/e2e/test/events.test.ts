// The audit log through the gateway: list vs single shapes, every filter (comma types, actor.role,
// since/until), hasMore, per-request events, and audit completeness of this file's writes.
import { EVENT_TYPES, EventDetail, EventListItem, RequestEventItem } from '@support-desk/contracts';
import t from 'tap';
import { cast, createActor } from '../src/actors.js';
import { expectError, expectKeys, expectOk, expectShape, ISO_DATE } from '../src/expect.js';
import { ABSENT } from '../src/fixtures.js';
import { type Json, qs } from '../src/http.js';
import { Ledger } from '../src/ledger.js';
import { eventually, sleep, startStack } from '../src/stack.js';
import { createRequest, createUser } from '../src/world.js';

// This file's part of the audit log: everything from here on (a shared stack holds earlier files'
// events too, and no other file writes to it while this one runs).
const START = new Date().toISOString();
const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
const ledger = new Ledger();
const UA = `sd-e2e/${stack.run}`;

// A second agent and some history: requests by two agents and an admin, status changes,
// assignments, comments, users created and changed by the admin.
const agent2 = await createActor(stack, 'agent', 'agent2');
const history: Json[] = [];

t.test('some history: requests by two agents and an admin, changes, comments, users', async (t) => {
  const results: Json[] = [];
  for (const who of [agent, agent2, admin]) {
    for (let i = 0; i < 3; i++) {
      const r = await createRequest(t, who.api, { priority: i === 0 ? 'high' : 'low' }, ledger);
      results.push(r);
      await sleep(3);
    }
  }
  const [r0, r1, r2] = results;
  const ua = { headers: { 'user-agent': UA } };
  expectOk(t, await agent.api.patch(`/v1/requests/${r0.id}`, { status: 'in_progress' }, ua), 200, 'status');
  ledger.record(r0.id, 'request.status_changed');
  expectOk(t, await agent.api.patch(`/v1/requests/${r1.id}`, { assignedTo: agent2.id }, ua), 200, 'assign');
  ledger.record(r1.id, 'request.assigned');
  ledger.allow(r1.id, 'request.status_changed');
  expectOk(
    t,
    await agent2.api.post(`/v1/requests/${r1.id}/comments`, { content: 'mine now' }, ua),
    201,
    'comment',
  );
  ledger.record(r1.id, 'request.comment_added');
  expectOk(t, await admin.api.patch(`/v1/requests/${r2.id}`, { priority: 'critical' }, ua), 200, 'priority');
  ledger.record(r2.id, 'request.priority_changed');
  const u = await createUser(t, admin.api, { role: 'viewer' }, ledger);
  expectOk(t, await admin.api.patch(`/v1/users/${u.id}`, { role: 'agent' }, ua), 200, 'role change');
  ledger.record(u.id, 'user.role_changed');
  history.push(...results, u);
});

t.test(
  'request.created carries the request (snapshot): description, people, never an internal note',
  async (t) => {
    const description = `Snapshot ${stack.run}: the VPN drops every ten minutes`;
    const r = await createRequest(
      t,
      agent.api,
      { description, assignedTo: agent2.id, tags: ['snap'] },
      ledger,
    );
    const note = `staff-only ${stack.run}`;
    expectOk(
      t,
      await agent.api.post(`/v1/requests/${r.id}/comments`, { content: note, isInternal: true }),
      201,
      'internal note',
    );
    ledger.record(r.id, 'request.comment_added');
    const events = (await eventually(async () => {
      const res = await admin.api.get(`/v1/events${qs({ resourceId: r.id })}`);
      const list = (res.json?.data?.events ?? []) as Json[];
      return list.some((e) => e.type === 'request.comment_added') && list;
    })) as Json[];
    const created = events.find((e) => e.type === 'request.created')!;
    expectShape(t, EventListItem, created, 'request.created with its snapshot');
    t.equal(created.snapshot?.description, description, 'what a new ticket elsewhere needs');
    t.same(created.snapshot?.requester, { id: agent.id, email: agent.email, name: agent.name, isVip: false });
    t.same(created.snapshot?.assignedTo, { id: agent2.id, email: agent2.email, name: agent2.name });
    t.same(created.snapshot?.tags, ['snap']);
    t.equal(created.snapshot?.status, 'assigned');
    const noted = events.find((e) => e.type === 'request.comment_added')!;
    t.equal(noted.snapshot?.commentCount, 0, 'internal notes are not even counted');
    t.notMatch(JSON.stringify(events), note, 'the internal note is in no event');
    const single = expectOk(t, await admin.api.get(`/v1/events/${created.id}`), 200, 'GET /v1/events/:id');
    t.same(single?.snapshot, created.snapshot, 'the single read shows the same snapshot');
    const user = await createUser(t, admin.api, { role: 'viewer' }, ledger);
    const userCreated = (await eventually(async () => {
      const res = await admin.api.get(`/v1/events${qs({ resourceId: user.id, type: 'user.created' })}`);
      return res.json?.data?.events?.[0] as Json | undefined;
    })) as Json;
    t.same(
      userCreated.snapshot,
      expectOk(t, await viewer.api.get(`/v1/users/${user.id}`), 200, 'the user as a viewer reads it'),
      'user.created carries the user as GET /v1/users/:id shows it',
    );
  },
);

t.test('concurrent writes: each still produces exactly one event', async (t) => {
  const made = await Promise.all(
    Array.from({ length: 20 }, () => createRequest(t, agent.api, { priority: 'low' }, ledger)),
  );
  const results = await Promise.all(
    made.flatMap((r, i) => [
      agent.api.post(`/v1/requests/${r.id}/comments`, { content: `c${i}` }),
      agent2.api.patch(`/v1/requests/${r.id}`, { priority: 'high' }),
    ]),
  );
  t.ok(
    results.every((r) => r.status === 200 || r.status === 201),
    'all 40 concurrent writes succeeded',
  );
  for (const r of made) ledger.record(r.id, 'request.comment_added', 'request.priority_changed');
});

t.test(
  'audit completeness: every write produced exactly its events (counted by resourceId and type)',
  async (t) => {
    await ledger.verify(t, admin.api);
  },
);

/** Every event since this file started, newest first, via the list API. */
async function allEvents(): Promise<Json[]> {
  const out: Json[] = [];
  for (let page = 1; page <= 50; page++) {
    const data = (await admin.api.get(`/v1/events${qs({ since: START, limit: 100, page })}`)).json?.data;
    out.push(...(data?.events ?? []));
    if (!data?.pagination?.hasMore) break;
  }
  return out;
}

t.test(
  "list vs single read; newest first; every filter matches a local filter of this file's log",
  async (t) => {
    const all = await allEvents();
    t.ok(all.length >= 20, `${all.length} events in this file's log`);
    for (const e of all.slice(0, 30)) {
      expectShape(t, EventListItem, e, `list item ${e.type}`);
      t.notOk('metadata' in e, 'list item has no metadata');
      t.notOk('role' in (e.actor ?? {}), 'list item actor has no role');
      t.match(e.id, /^evt_/, 'id prefix evt_');
      t.match(e.timestamp, ISO_DATE, 'timestamp');
    }
    const stamps = all.map((e) => Date.parse(e.timestamp));
    t.same(
      stamps,
      [...stamps].sort((a, b) => b - a),
      'newest first',
    );

    // Single reads: metadata and actor.role, for every event (needed for the actor.role filter).
    const roles = new Map<string, string>();
    for (const e of all) {
      const d = expectOk(t, await admin.api.get(`/v1/events/${e.id}`), 200, `GET /v1/events/${e.type}`);
      if (!d) continue;
      roles.set(e.id, d.actor?.role);
      if (roles.size <= 12) {
        expectShape(t, EventDetail, d, `single read ${e.type}`);
        t.same(
          { ...d, metadata: undefined, actor: { ...d.actor, role: undefined } },
          { ...e, metadata: undefined, actor: { ...e.actor, role: undefined } },
          'single read = list item + metadata + actor.role',
        );
      }
    }
    const mine = all.find((e) => e.type === 'request.priority_changed' && e.resourceId === history[2].id);
    const mineDetail =
      mine && expectOk(t, await admin.api.get(`/v1/events/${mine.id}`), 200, 'single read of our PATCH');
    t.same(
      mineDetail?.actor,
      { id: admin.id, name: admin.name, email: admin.email, role: 'admin' },
      'actor with role',
    );
    t.equal(mineDetail?.metadata?.source, 'api', 'metadata.source api');
    t.equal(mineDetail?.metadata?.userAgent, UA, 'metadata.userAgent as sent');
    t.same(mineDetail?.changes?.priority, { from: 'low', to: 'critical' }, 'changes');
    t.ok(typeof mineDetail?.ipAddress === 'string' && mineDetail.ipAddress.length > 0, 'ipAddress recorded');

    const server = async (q: Record<string, string>) => {
      const data = expectOk(
        t,
        // Within this file's log: `since` is this file's start unless the check gives a later one.
        await admin.api.get(`/v1/events${qs({ since: START, ...q, limit: 100 })}`),
        200,
        `events ${qs(q)}`,
      );
      t.equal(data?.pagination?.hasMore, false, `${qs(q)}: one page`);
      return ((data?.events ?? []) as Json[]).map((e) => e.id);
    };
    const local = (f: (e: Json) => boolean) => all.filter(f).map((e) => e.id);
    const check = async (q: Record<string, string>, f: (e: Json) => boolean, what: string) => {
      const want = local(f);
      t.ok(want.length > 0, `${what}: the log has matching events (${want.length})`);
      t.same(await server(q), want, `${what}: exactly the matching events, newest first`);
    };
    await check({ type: 'request.created' }, (e) => e.type === 'request.created', 'type');
    await check(
      { type: 'request.status_changed,user.role_changed' },
      (e) => ['request.status_changed', 'user.role_changed'].includes(e.type),
      'type, comma-separated',
    );
    await check(
      { type: 'request.comment_added, request.assigned' },
      (e) => ['request.comment_added', 'request.assigned'].includes(e.type),
      'type list with a space',
    );
    for (const rt of ['request', 'user', 'system']) {
      await check({ resourceType: rt }, (e) => e.resourceType === rt, `resourceType=${rt}`);
    }
    await check({ resourceId: history[1].id }, (e) => e.resourceId === history[1].id, 'resourceId');
    await check(
      { userId: agent2.id },
      (e) => e.actor?.id === agent2.id,
      'userId (events performed by this user)',
    );
    for (const role of ['admin', 'agent']) {
      await check({ 'actor.role': role }, (e) => roles.get(e.id) === role, `actor.role=${role}`);
    }
    await check({ actorRole: 'agent' }, (e) => roles.get(e.id) === 'agent', 'actorRole alias');
    await check(
      { resourceType: 'request', 'actor.role': 'admin' },
      (e) => e.resourceType === 'request' && roles.get(e.id) === 'admin',
      'filters combine',
    );

    // since (inclusive) / until (exclusive) around an event in the middle
    const pivot = all[Math.floor(all.length / 2)];
    await check(
      { since: pivot.timestamp },
      (e) => Date.parse(e.timestamp) >= Date.parse(pivot.timestamp),
      'since (inclusive)',
    );
    await check(
      { until: pivot.timestamp },
      (e) => Date.parse(e.timestamp) < Date.parse(pivot.timestamp),
      'until (exclusive)',
    );
    const lo = all[all.length - 3];
    const hi = all[2];
    await check(
      { since: lo.timestamp, until: hi.timestamp },
      (e) =>
        Date.parse(e.timestamp) >= Date.parse(lo.timestamp) &&
        Date.parse(e.timestamp) < Date.parse(hi.timestamp),
      'since + until window',
    );
    t.same(
      await server({ since: new Date(Date.now() + 3_600_000).toISOString() }),
      [],
      'since in the future: nothing',
    );
    t.same(await server({ resourceId: ABSENT.request }), [], 'unknown resourceId: nothing');
  },
);

t.test('pagination: page/limit defaults and maximum, hasMore', async (t) => {
  const first = expectOk(t, await admin.api.get('/v1/events'), 200, 'GET /v1/events');
  const total = first?.pagination?.total;
  t.ok(total > 20, `more than one default page (${total})`);
  const { nextCursor, ...pagination } = first?.pagination ?? {};
  t.same(
    pagination,
    { page: 1, limit: 20, total, pages: Math.ceil(total / 20), hasMore: true },
    'defaults + hasMore',
  );
  t.match(nextCursor, /^[A-Za-z0-9_-]+$/, 'and the cursor after the page');
  t.equal(first?.events?.length, 20, '20 by default');
  const last = expectOk(
    t,
    await admin.api.get(`/v1/events?limit=7&page=${Math.ceil(total / 7)}`),
    200,
    'last page',
  );
  t.equal(last?.pagination?.hasMore, false, 'hasMore false on the last page');
  t.equal(last?.events?.length, total - 7 * (Math.ceil(total / 7) - 1), 'the rest');
  const mid = expectOk(t, await admin.api.get('/v1/events?limit=7&page=1'), 200, 'page 1 of 7');
  t.equal(mid?.pagination?.hasMore, true, 'hasMore true before the last page');
  const p2 = expectOk(t, await admin.api.get('/v1/events?limit=7&page=2'), 200, 'page 2 of 7');
  t.same(
    p2?.events?.filter((e: Json) => mid?.events?.some((m: Json) => m.id === e.id)),
    [],
    'pages do not overlap',
  );
  const clamp = expectOk(t, await admin.api.get('/v1/events?limit=1000'), 200, 'limit 1000');
  t.equal(clamp?.pagination?.limit, 100, 'clamped to 100');
  t.ok(clamp?.events?.length <= 100, 'at most 100');
  for (const q of [
    'limit=0',
    'page=0',
    'limit=x',
    'type=request.exploded',
    'type=request.created,nope',
    'resourceType=planet',
    'actor.role=king',
    'since=yesterday',
    'until=2024-02-30T99:00:00Z',
    'color=red',
  ]) {
    const res = await admin.api.get(`/v1/events?${q}`);
    expectError(t, res, 400, 'VALIDATION_ERROR', `GET /v1/events?${q}`);
  }
  const unknownType = await admin.api.get('/v1/events?type=request.exploded');
  t.match(unknownType.json?.error?.message, /request\.exploded|type/, 'the 400 names the unknown type');
  t.equal(EVENT_TYPES.length, 20, "the 18 event types of the spec and the trash's two");
});

t.test('per-request events', async (t) => {
  const r = history[1];
  const res = await viewer.api.get(`/v1/requests/${r.id}/events`);
  const data = expectOk(t, res, 200, 'GET /v1/requests/:id/events (requests:read)');
  expectKeys(t, data, ['events'], 'data.events only, no pagination object');
  const types = (data?.events ?? []).map((e: Json) => e.type);
  t.equal(types[0], 'request.created', 'oldest first: request.created');
  t.ok(
    types.includes('request.assigned') && types.includes('request.comment_added'),
    'assignment and comment events',
  );
  for (const e of data?.events ?? []) {
    expectShape(t, RequestEventItem, e, `request event ${e.type}`);
    t.ok(
      ['id', 'type', 'timestamp', 'actor'].every((k) => k in e),
      'id, type, timestamp, actor',
    );
  }
  const assigned = data?.events?.find((e: Json) => e.type === 'request.assigned');
  t.same(
    assigned?.changes?.assignedTo,
    { from: null, to: agent2.id },
    'first assignment: changes.assignedTo {from: null, to}',
  );
  expectError(
    t,
    await agent.api.get(`/v1/requests/${ABSENT.request}/events`),
    404,
    'NOT_FOUND',
    'unknown request: 404, not an empty list',
  );
  expectError(t, await agent.api.get('/v1/events'), 403, 'FORBIDDEN', 'GET /v1/events needs admin');
  expectError(
    t,
    await agent.api.get(`/v1/events/${ABSENT.event}`),
    403,
    'FORBIDDEN',
    'GET /v1/events/:id needs admin',
  );
  expectError(t, await admin.api.get(`/v1/events/${ABSENT.event}`), 404, 'NOT_FOUND', 'unknown event');
  expectError(
    t,
    await admin.api.get('/v1/events/evt_bad'),
    404,
    'NOT_FOUND',
    'malformed event id (opaque ids)',
  );
  expectError(t, await stack.api(null).get('/v1/events'), 401, 'UNAUTHORIZED', 'no credential');
  // Clients cannot create events.
  expectError(
    t,
    await admin.api.post('/v1/events', { type: 'request.created' }),
    405,
    'METHOD_NOT_ALLOWED',
    'POST /v1/events: the path has no POST (405 with Allow)',
  );
});
