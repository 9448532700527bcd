import {
  PUBLIC_ROUTES,
  REQUEST_LIMITS,
  requestsRouteSchemas,
  routeKey,
  slaPoliciesRouteSchemas,
} from '@support-desk/contracts';
import { testPrincipal } from '@support-desk/platform/testing';
import t from 'tap';
import { requestModel } from '../src/store/requests.js';
import { harness, validBody } from './helpers.js';

t.test('every public requests route has a schema entry', async (t) => {
  for (const route of PUBLIC_ROUTES.filter((r) => r.service === 'requests')) {
    t.ok(
      Object.hasOwn({ ...requestsRouteSchemas, ...slaPoliciesRouteSchemas }, routeKey(route)),
      routeKey(route),
    );
  }
});

t.test('create, single read and list shapes', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const vip = h.identity.person('agent', { isVip: true });
  const group = h.identity.addGroup('Hardware');

  const created = await h.call(
    vip.principal,
    'POST',
    '/v1/requests',
    validBody({ tags: ['printer', 'fire', 'printer'], category: 'hardware' }),
  );
  t.equal(created.status, 201);
  t.same(Object.keys(created.body.data).sort(), ['createdAt', 'id', 'status', 'title']);
  t.equal(created.body.data.status, 'open');
  t.match(created.body.data.id, /^req_[0-9a-z]{26}$/);
  const id = created.body.data.id;

  const withAssignee = await h.call(
    agent.principal,
    'POST',
    '/v1/requests',
    validBody({ assignedTo: agent.user.id, assignedGroup: group.id }),
  );
  t.equal(withAssignee.status, 201);
  t.equal(withAssignee.body.data.status, 'assigned', 'created with an assignee → assigned');

  const single = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(single.status, 200);
  const d = single.body.data;
  t.same(Object.keys(d).sort(), [
    'assignedGroup',
    'assignedTo',
    'attachments',
    'category',
    'comments',
    'createdAt',
    'description',
    'id',
    'priority',
    'requester',
    'sla',
    'status',
    'tags',
    'title',
    'updatedAt',
  ]);
  t.same(d.tags, ['printer', 'fire'], 'duplicate tags dropped');
  t.same(d.requester, { id: vip.user.id, email: vip.user.email, name: vip.user.name, isVip: true });
  t.equal(d.assignedTo, null);
  t.equal(d.assignedGroup, null);
  t.equal(d.category, 'hardware');
  t.equal(d.sla.tier, 'vip:high');
  t.same(d.comments, []);
  t.same(d.attachments, []);
  t.notOk('resolution' in d, 'no resolution before resolved');

  const assigned = await h.call(agent.principal, 'GET', `/v1/requests/${withAssignee.body.data.id}`);
  t.same(assigned.body.data.assignedTo, {
    id: agent.user.id,
    email: agent.user.email,
    name: agent.user.name,
  });
  t.same(assigned.body.data.assignedGroup, { id: group.id, name: 'Hardware' });
  t.equal(assigned.body.data.requester.isVip, false);
  t.equal(assigned.body.data.sla.tier, 'standard:high');

  const list = await h.call(agent.principal, 'GET', '/v1/requests');
  t.equal(list.status, 200);
  t.same(list.body.data.pagination, { page: 1, limit: 20, total: 2, pages: 1, nextCursor: null });
  const item = list.body.data.requests.find((r: { id: string }) => r.id === withAssignee.body.data.id);
  t.same(Object.keys(item).sort(), [
    'assignedGroup',
    'assignedTo',
    'category',
    'createdAt',
    'description',
    'id',
    'priority',
    'requester',
    'status',
    'title',
    'updatedAt',
  ]);
  t.equal(item.assignedTo, agent.user.id);
  t.equal(item.assignedGroup, group.id);
  t.same(item.requester, { id: agent.user.id, email: agent.user.email, name: agent.user.name });

  const events = await h.events({ resourceId: withAssignee.body.data.id });
  t.same(
    events.map((e) => e.type),
    ['request.created', 'request.assigned'],
  );
  t.same(events[1].changes, {
    assignedTo: { from: null, to: agent.user.id },
    assignedGroup: { from: null, to: group.id },
  });
  t.equal(events[0].actor.id, agent.user.id);
  t.same(events[0].changes?.status, { from: null, to: 'assigned' });
});

t.test('bad input is 400 naming the field, nothing written', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const inactive = h.identity.person('agent', { status: 'inactive' });
  const model = requestModel(h.conn);
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['missing title', { description: 'd', priority: 'low' }, /body\.title/],
    ['empty title', validBody({ title: '' }), /body\.title/],
    ['blank title', validBody({ title: '   ' }), /body\.title/],
    ['long title', validBody({ title: 'x'.repeat(REQUEST_LIMITS.titleMax + 1) }), /body\.title/],
    ['unknown priority', validBody({ priority: 'urgent' }), /body\.priority/],
    [
      'too many tags',
      validBody({ tags: Array.from({ length: REQUEST_LIMITS.tagsMax + 1 }, (_, i) => `t${i}`) }),
      /body\.tags/,
    ],
    ['malformed assignee', validBody({ assignedTo: 'bob' }), /body\.assignedTo/],
    [
      'unknown assignee',
      validBody({ assignedTo: 'usr_0000000000aaaaaaaaaaaaaaaa' }),
      /body\.assignedTo.*does not exist/,
    ],
    ['viewer assignee', validBody({ assignedTo: viewer.user.id }), /body\.assignedTo.*not an agent/],
    ['inactive assignee', validBody({ assignedTo: inactive.user.id }), /body\.assignedTo.*not active/],
    ['unknown group', validBody({ assignedGroup: 'grp_0000000000aaaaaaaaaaaaaaaa' }), /body\.assignedGroup/],
    ['unknown field', validBody({ status: 'closed' }), /body\.status is not a known field/],
  ];
  for (const [name, body, message] of cases) {
    const res = await h.call(agent.principal, 'POST', '/v1/requests', body);
    t.equal(res.status, 400, name);
    t.equal(res.body.error.code, 'VALIDATION_ERROR', name);
    t.match(res.body.error.message, message, name);
  }
  t.equal(await model.countDocuments({}), 0, 'nothing written');

  const bad = await h.call(agent.principal, 'GET', '/v1/requests/not-an-id');
  t.equal(bad.status, 404, 'a malformed id names no request: 404 like an unknown one');
  t.equal(bad.body.error.code, 'NOT_FOUND');
  t.match(bad.body.error.message, /request ids look like req_/);
  const missing = await h.call(agent.principal, 'GET', '/v1/requests/req_0000000000aaaaaaaaaaaaaaaa');
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'NOT_FOUND');

  const created = await h.call(agent.principal, 'POST', '/v1/requests', validBody());
  const id = created.body.data.id;
  const patches: [Record<string, unknown>, RegExp][] = [
    [{}, /body/],
    [{ status: 'done' }, /body\.status/],
    [{ priority: 'p1' }, /body\.priority/],
    [{ title: '' }, /body\.title/],
    // The schema states it (`if`/`then`): a resolution needs `status: resolved` beside it.
    [{ resolution: 'fixed' }, /body\.status is required/],
    [{ resolution: 'fixed', status: 'pending' }, /body\.status must be "resolved"/],
    [{ assignedTo: viewer.user.id }, /body\.assignedTo/],
    [{ tags: [''] }, /body\.tags/],
  ];
  for (const [body, message] of patches) {
    const res = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error.message, message);
  }
  const after = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(after.body.data.updatedAt, created.body.data.createdAt, 'nothing changed');
  t.same(
    (await h.events({ resourceId: id })).map((e) => e.type),
    ['request.created'],
  );
});

t.test('list filters, sort and pagination edges', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const other = h.identity.person('admin');
  const group = h.identity.addGroup();
  const ids: string[] = [];
  const specs = [
    { priority: 'low' },
    { priority: 'high', assignedTo: agent.user.id },
    { priority: 'high', assignedGroup: group.id },
    { priority: 'critical', assignedTo: other.user.id, assignedGroup: group.id },
    { priority: 'medium' },
  ];
  const start = h.clock.now();
  for (const spec of specs) {
    const res = await h.call(agent.principal, 'POST', '/v1/requests', validBody(spec));
    ids.push(res.body.data.id);
    h.clock.advance(60_000);
  }
  const list = async (query: string) => (await h.call(agent.principal, 'GET', `/v1/requests${query}`)).body;
  const idsOf = (body: { data: { requests: { id: string }[] } }) => body.data.requests.map((r) => r.id);

  t.same(idsOf(await list('')), [...ids].reverse(), 'newest first');
  t.same(idsOf(await list('?priority=high')), [ids[2], ids[1]]);
  t.same(idsOf(await list('?status=assigned')), [ids[3], ids[1]]);
  t.same(idsOf(await list('?status=open')), [ids[4], ids[2], ids[0]]);
  t.same(idsOf(await list(`?assignedTo=${agent.user.id}`)), [ids[1]]);
  t.same(idsOf(await list(`?groupId=${group.id}`)), [ids[3], ids[2]]);
  const t2 = new Date(start.getTime() + 2 * 60_000).toISOString();
  const t4 = new Date(start.getTime() + 4 * 60_000).toISOString();
  t.same(idsOf(await list(`?createdAfter=${t2}`)), [ids[4], ids[3], ids[2]]);
  t.same(idsOf(await list(`?createdBefore=${t2}`)), [ids[1], ids[0]]);
  t.same(idsOf(await list(`?createdAfter=${t2}&createdBefore=${t4}&priority=high`)), [ids[2]]);

  const p1 = await list('?limit=2');
  t.same(p1.data.pagination, {
    page: 1,
    limit: 2,
    total: 5,
    pages: 3,
    nextCursor: p1.data.pagination.nextCursor,
  });
  t.type(p1.data.pagination.nextCursor, 'string', 'a cursor to continue with');
  t.same(idsOf(p1), [ids[4], ids[3]]);
  const p3 = await list('?limit=2&page=3');
  t.same(idsOf(p3), [ids[0]]);
  const p9 = await list('?limit=2&page=9');
  t.same(idsOf(p9), []);
  t.equal(p9.data.pagination.total, 5);
  t.equal((await list('?limit=500')).data.pagination.limit, 100, 'clamped to 100');

  for (const q of [
    '?limit=0',
    '?limit=-1',
    '?limit=abc',
    '?page=0',
    '?page=x',
    '?page=1e300',
    '?page=1.5',
    '?status=nope',
    '?priority=p1',
    '?createdAfter=yesterday',
    '?assignedTo=bob',
    '?groupId=42',
    '?unknown=1',
  ]) {
    const res = await h.call(agent.principal, 'GET', `/v1/requests${q}`);
    t.equal(res.status, 400, q);
    t.match(res.body.error.message, /^query\./, q);
  }
});

t.test('permissions and soft delete', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const admin = h.identity.person('admin');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;

  const anonymous = await h.app.inject({ method: 'GET', url: '/v1/requests' });
  t.equal(anonymous.statusCode, 401);
  t.equal((await h.call(viewer.principal, 'GET', `/v1/requests/${id}`)).status, 200, 'viewer reads');
  t.equal((await h.call(viewer.principal, 'GET', '/v1/requests')).status, 200);
  const viewerCreate = await h.call(viewer.principal, 'POST', '/v1/requests', validBody());
  t.equal(viewerCreate.status, 403);
  t.equal(viewerCreate.body.error.code, 'FORBIDDEN');
  t.equal((await h.call(viewer.principal, 'PATCH', `/v1/requests/${id}`, { title: 'x' })).status, 403);
  const noScope = testPrincipal('agent', { scopes: ['requests:read'] });
  t.equal((await h.call(noScope, 'POST', '/v1/requests', validBody())).status, 403, 'scope, not role');
  t.equal((await h.call(agent.principal, 'DELETE', `/v1/requests/${id}`)).status, 403, 'agent cannot delete');

  const del = await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
  t.equal(del.status, 200);
  t.same(del.body.data, { deleted: true });
  for (const [method, url, body] of [
    ['GET', `/v1/requests/${id}`],
    ['PATCH', `/v1/requests/${id}`, { title: 'again' }],
    ['DELETE', `/v1/requests/${id}`],
    ['POST', `/v1/requests/${id}/comments`, { content: 'hello' }],
  ] as const) {
    const res = await h.call(admin.principal, method, url, body);
    t.equal(res.status, 404, `${method} ${url} after delete`);
  }
  t.equal((await h.call(admin.principal, 'GET', '/v1/requests')).body.data.pagination.total, 0);
  t.ok(await requestModel(h.conn).findById(id), 'kept for audit');
  const events = await h.events({ resourceId: id });
  t.same(
    events.map((e) => e.type),
    ['request.created', 'request.deleted'],
  );
  t.equal(events[1].actor.id, admin.user.id);
});

t.test('PATCH emits one event per kind of change', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const group = h.identity.addGroup();
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody({ tags: ['a'] }))).body.data.id;
  h.clock.advance(1000);
  const res = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, {
    title: 'New title',
    tags: ['a', 'b'],
    priority: 'critical',
    assignedTo: agent.user.id,
    assignedGroup: group.id,
    category: 'network',
  });
  t.equal(res.status, 200);
  t.same(Object.keys(res.body.data).sort(), ['id', 'status', 'updatedAt']);
  t.equal(res.body.data.status, 'assigned', 'assigning an open request moves it to assigned');
  t.equal(res.body.data.updatedAt, h.clock.now().toISOString(), 'updatedAt moves');
  const events = await h.events({ resourceId: id });
  t.same(
    events.map((e) => e.type),
    [
      'request.created',
      'request.updated',
      'request.assigned',
      'request.priority_changed',
      'request.status_changed',
    ],
  );
  t.same(events[1].changes, {
    title: { from: 'Printer on fire', to: 'New title' },
    category: { from: null, to: 'network' },
    tags: { from: ['a'], to: ['a', 'b'] },
  });
  t.same(events[2].changes, {
    assignedTo: { from: null, to: agent.user.id },
    assignedGroup: { from: null, to: group.id },
  });
  t.same(events[3].changes, { priority: { from: 'high', to: 'critical' } });
  t.same(events[4].changes, { status: { from: 'open', to: 'assigned' } });

  const read = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(read.body.data.sla.tier, 'standard:critical', 'priority change recomputes the SLA');
  t.equal(
    read.body.data.sla.responseTarget,
    new Date(Date.parse(read.body.data.createdAt) + 3600_000).toISOString(),
  );

  const same = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { title: 'New title' });
  t.equal(same.status, 200);
  t.equal((await h.events({ resourceId: id })).length, 5, 'no-op PATCH emits nothing');
});

t.test('concurrent first sightings of one user and group all succeed', async (t) => {
  const h = await harness(t);
  const requester = h.identity.person('agent');
  // Neither is in the read model yet: every create asks identity and stores them at once.
  const assignee = h.identity.addUser('agent');
  const group = h.identity.addGroup('Network');
  const results = await Promise.all(
    Array.from({ length: 6 }, () =>
      h.call(
        requester.principal,
        'POST',
        '/v1/requests',
        validBody({ assignedTo: assignee.id, assignedGroup: group.id }),
      ),
    ),
  );
  t.same(
    results.map((r) => r.status),
    [201, 201, 201, 201, 201, 201],
    'no duplicate-key failure when two lookups store the same entry',
  );
  const list = await h.call(requester.principal, 'GET', `/v1/requests?assignedTo=${assignee.id}`);
  t.equal(list.body.data.pagination.total, 6);
});

t.test('identity unreachable: 503 that names no internal detail, and nothing is written', async (t) => {
  const h = await harness(t);
  const creator = h.identity.person('agent');
  const before = await h.events();
  h.stopIdentity();
  const unknown = testPrincipal('agent').userId;
  const res = await h.call(creator.principal, 'POST', '/v1/requests', validBody({ assignedTo: unknown }));
  t.equal(res.status, 503);
  t.equal(res.body.error.code, 'SERVICE_UNAVAILABLE');
  t.equal(res.body.error.message, 'Cannot verify the reference right now; retry later');
  t.notMatch(res.body.error.message, /rpc|nats|respond|timeout|identity\.|sd\./i, 'no transport detail');
  t.equal(res.body.error.message.includes(unknown), false, 'nor the id asked about');
  t.same(await h.events(), before, 'no event: nothing was created');
});

t.test('every request event carries the request as it is after the change (snapshot)', async (t) => {
  const h = await harness(t);
  const requester = h.identity.person('agent', { isVip: true });
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const group = h.identity.addGroup('Network');
  const created = await h.call(
    requester.principal,
    'POST',
    '/v1/requests',
    validBody({ assignedTo: agent.user.id, assignedGroup: group.id, tags: ['vpn'], category: 'network' }),
  );
  const id = created.body.data.id as string;
  h.clock.advance(1000);
  await h.call(agent.principal, 'POST', `/v1/requests/${id}/comments`, {
    content: 'Secret: the VPN box is unplugged',
    isInternal: true,
  });
  h.clock.advance(1000);
  await h.call(agent.principal, 'POST', `/v1/requests/${id}/comments`, { content: 'On it' });
  h.clock.advance(1000);
  await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, {
    status: 'in_progress',
    priority: 'critical',
  });
  const detail = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  h.clock.advance(1000);
  await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);

  const events = await h.events({ resourceId: id });
  t.same(
    events.map((e) => e.type),
    [
      'request.created',
      'request.assigned',
      'request.comment_added',
      'request.comment_added',
      'request.priority_changed',
      'request.status_changed',
      'request.deleted',
    ],
  );
  const snapshots = events.map((e) => (e as { snapshot?: Record<string, any> }).snapshot);
  const [atCreate] = snapshots;
  t.same(atCreate?.requester, {
    id: requester.user.id,
    email: requester.user.email,
    name: requester.user.name,
    isVip: true,
  });
  t.same(atCreate?.assignedTo, { id: agent.user.id, email: agent.user.email, name: agent.user.name });
  t.same(atCreate?.assignedGroup, { id: group.id, name: 'Network' });
  t.equal(atCreate?.description, validBody().description, 'what a new ticket elsewhere needs');
  t.same(atCreate?.tags, ['vpn']);
  t.equal(atCreate?.sla.tier, 'vip:high');
  t.same([atCreate?.commentCount, atCreate?.attachmentCount], [0, 0]);
  t.same(snapshots[1], atCreate, 'the events of one write carry one snapshot');
  t.equal(snapshots[2]?.commentCount, 0, 'internal notes are not counted');
  t.equal(snapshots[3]?.commentCount, 1, 'public comments are');
  const { comments: _comments, attachments: _attachments, ...fields } = detail;
  t.same(
    snapshots[5],
    { ...fields, commentCount: 1, attachmentCount: 0 },
    'the fields of the single read an agent gets, comments and attachments as counts',
  );
  t.equal(snapshots[6]?.status, 'in_progress', 'a deleted request: as it was when deleted');
  for (const [n, s] of snapshots.entries()) {
    t.equal(s?.id, id, `${events[n]?.type} has the snapshot`);
    t.notOk(s && 'comments' in s, 'never the comments themselves');
  }
  t.notMatch(JSON.stringify(events), /Secret/, 'internal-note content is in no event');
});
