import { identityRouteSchemas, newId, PUBLIC_ROUTES, routeKey } from '@support-desk/contracts';
import t from 'tap';
import { body, harness } from './helpers.js';

t.test('users API', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const viewer = await h.headers('viewer');

  const post = async (payload: unknown, headers = admin) =>
    h.app.inject({ method: 'POST', url: '/v1/users', headers, payload: payload as object });

  await t.test('every public identity route has a contract schema and is served', async (t) => {
    const routes = PUBLIC_ROUTES.filter((r) => r.service === 'identity');
    t.ok(routes.length >= 14);
    for (const r of routes) {
      t.ok(Object.hasOwn(identityRouteSchemas, routeKey(r)), `schema for ${routeKey(r)}`);
      t.ok(h.app.hasRoute({ method: r.method, url: r.path }), `route ${routeKey(r)}`);
    }
    t.same(Object.keys(identityRouteSchemas).sort(), routes.map(routeKey).sort(), 'no extra schemas');
  });

  await t.test('requires a principal and the right scope', async (t) => {
    const anon = await h.app.inject({ method: 'GET', url: '/v1/users' });
    t.equal(anon.statusCode, 401);
    t.equal(body(anon).error.code, 'UNAUTHORIZED');
    const forged = await h.app.inject({
      method: 'GET',
      url: '/v1/users',
      headers: { 'x-sd-principal': 'x.y.z' },
    });
    t.equal(forged.statusCode, 401);
    const res = await post({ email: 'v@example.com', name: 'V', role: 'viewer' }, viewer);
    t.equal(res.statusCode, 403);
    t.equal(body(res).error.code, 'FORBIDDEN');
    t.equal((await h.app.inject({ method: 'GET', url: '/v1/users', headers: viewer })).statusCode, 200);
  });

  let aliceId = '';
  await t.test('create: response shape and user.created event with changes', async (t) => {
    const res = await post({
      email: 'Alice@Example.com',
      name: 'Alice',
      role: 'agent',
      isVip: true,
      metadata: { department: 'IT' },
    });
    t.equal(res.statusCode, 201);
    const data = body(res).data;
    t.match(data, {
      email: 'Alice@Example.com',
      name: 'Alice',
      role: 'agent',
      status: 'active',
      isVip: true,
      groups: [],
    });
    t.match(data.id, /^usr_[0-9a-z]{26}$/);
    t.ok(Date.parse(data.createdAt));
    aliceId = data.id;
    const ev = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === aliceId);
    t.same(ev.changes?.email, { from: null, to: 'Alice@Example.com' });
    t.same(ev.changes?.role, { from: null, to: 'agent' });
    t.same(ev.changes?.metadata, { from: null, to: { department: 'IT' } });
    t.equal(ev.resourceType, 'user');
    t.equal(ev.metadata.source, 'api');
    t.equal(ev.actor.role, 'admin');
    t.equal(ev.ipAddress, '127.0.0.1');
  });

  await t.test('create: duplicate email (case-insensitive) is 409', async (t) => {
    const res = await post({ email: 'alice@EXAMPLE.com', name: 'Other', role: 'viewer' });
    t.equal(res.statusCode, 409);
    t.equal(body(res).error.code, 'CONFLICT');
  });

  await t.test('create: bad inputs are 400 naming the field, nothing written', async (t) => {
    const before = await h.stored.users.countDocuments();
    const cases: [unknown, RegExp][] = [
      [{ name: 'x', role: 'agent' }, /body\.email is required/],
      [{ email: 'not-an-email', name: 'x', role: 'agent' }, /body\.email/],
      [{ email: 'a@b.co', name: 'x', role: 'boss' }, /body\.role must be one of/],
      [{ email: 'a@b.co', name: '', role: 'agent' }, /body\.name/],
      [{ email: 'a@b.co', name: 'x'.repeat(201), role: 'agent' }, /body\.name/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', isVip: 'yes' }, /body\.isVip/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', groups: ['nope'] }, /body\.groups/],
      [
        { email: 'a@b.co', name: 'x', role: 'agent', groups: [newId('group')] },
        /body\.groups: unknown group/,
      ],
      [{ email: 'a@b.co', name: 'x', role: 'agent', extra: 1 }, /body\.extra is not a known field/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', metadata: { a: { b: 1 } } }, /body\.metadata/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', metadata: { 'org.unit': 'IT' } }, /body\.metadata/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', metadata: { 'a b': 'IT' } }, /body\.metadata/],
      [{ email: 'a@b.co', name: 'x', role: 'agent', metadata: { ['k'.repeat(65)]: 'IT' } }, /body\.metadata/],
    ];
    for (const [payload, message] of cases) {
      const res = await post(payload);
      t.equal(res.statusCode, 400, JSON.stringify(payload));
      t.equal(body(res).error.code, 'VALIDATION_ERROR');
      t.match(body(res).error.message, message);
    }
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '{"email":',
    });
    t.equal(bad.statusCode, 400);
    t.equal(await h.stored.users.countDocuments(), before);
  });

  await t.test('read one: full user, unknown 404, malformed 404', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: `/v1/users/${aliceId}`, headers: admin });
    t.equal(res.statusCode, 200);
    const u = body(res).data;
    t.match(u, { id: aliceId, identityProvider: 'local', metadata: { department: 'IT' }, lastLoginAt: null });
    t.ok(u.updatedAt);
    t.notOk('passwordHash' in u);
    t.notOk('outbox' in u);
    const missing = await h.app.inject({ method: 'GET', url: `/v1/users/${newId('user')}`, headers: admin });
    t.equal(missing.statusCode, 404);
    t.equal(body(missing).error.code, 'NOT_FOUND');
    const malformed = await h.app.inject({ method: 'GET', url: '/v1/users/abc', headers: admin });
    t.equal(malformed.statusCode, 404, 'a malformed id names no user: 404 like an unknown one');
    t.match(body(malformed).error.message, /user ids look like usr_/);
  });

  await t.test('list: filters, search, pagination edges', async (t) => {
    for (let i = 0; i < 5; i++) {
      const res = await post({
        email: `bulk${i}@corp.test`,
        name: `Bulk (${i}).*`,
        role: i % 2 ? 'viewer' : 'agent',
      });
      t.equal(res.statusCode, 201);
    }
    const list = async (qs: string) =>
      h.app.inject({ method: 'GET', url: `/v1/users?${qs}`, headers: admin });
    let res = await list('limit=2&page=1');
    t.equal(res.statusCode, 200);
    const data = body(res).data;
    t.equal(data.users.length, 2);
    t.same(data.pagination, {
      page: 1,
      limit: 2,
      total: 6,
      pages: 3,
      nextCursor: data.pagination.nextCursor,
    });
    t.type(data.pagination.nextCursor, 'string');
    t.equal(data.users[0].email, 'bulk4@corp.test', 'newest first');
    t.same(
      Object.keys(data.users[0]).sort(),
      ['createdAt', 'email', 'groups', 'id', 'isVip', 'lastLoginAt', 'name', 'role', 'status'].sort(),
    );
    res = await list('limit=2&page=4');
    t.same(body(res).data.users, [], 'page past the end is empty');
    res = await list('limit=1000');
    t.equal(body(res).data.pagination.limit, 100, 'limit clamped');
    for (const qs of [
      'limit=0',
      'limit=-1',
      'limit=abc',
      'page=0',
      'page=x',
      'role=boss',
      'status=gone',
      'isVip=maybe',
      'groupId=zz',
      'unknown=1',
    ]) {
      const r = await list(qs);
      t.equal(r.statusCode, 400, qs);
      t.equal(body(r).error.code, 'VALIDATION_ERROR');
    }
    t.match(body(await list('limit=0')).error.message, /query\.limit/);
    res = await list('search=BULK%20(3).*');
    t.same(
      body(res).data.users.map((u: { email: string }) => u.email),
      ['bulk3@corp.test'],
      'regex-escaped, case-insensitive',
    );
    res = await list('search=ALICE');
    t.equal(body(res).data.pagination.total, 1);
    res = await list('role=viewer');
    t.equal(body(res).data.pagination.total, 2);
    res = await list('isVip=true');
    t.same(
      body(res).data.users.map((u: { id: string }) => u.id),
      [aliceId],
    );
    res = await list('search=');
    t.equal(body(res).data.pagination.total, 6, 'an empty search filters nothing');
    res = await list('search=' + 'x'.repeat(201));
    t.equal(res.statusCode, 400);
    res = await list('status=inactive');
    t.equal(body(res).data.pagination.total, 0);
  });

  await t.test('update: changed fields, events per kind, notices', async (t) => {
    const res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { name: 'Alice B', role: 'admin', isVip: true },
    });
    t.equal(res.statusCode, 200);
    const data = body(res).data;
    t.same(
      Object.keys(data).sort(),
      ['id', 'name', 'role', 'updatedAt'],
      'only changed fields (isVip unchanged)',
    );
    t.equal(data.role, 'admin');
    const updated = await h.waitForEvent((e) => e.type === 'user.updated' && e.resourceId === aliceId);
    t.same(updated.changes, { name: { from: 'Alice', to: 'Alice B' } });
    const role = await h.waitForEvent((e) => e.type === 'user.role_changed' && e.resourceId === aliceId);
    t.same(role.changes, { role: { from: 'agent', to: 'admin' } });
    await h.waitForNotice((n) => n.kind === 'user_role_changed' && n.userId === aliceId);
    const empty = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: {},
    });
    t.equal(empty.statusCode, 400);
    const badStatus = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { status: 'deleted' },
    });
    t.equal(badStatus.statusCode, 400);
    const missing = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${newId('user')}`,
      headers: admin,
      payload: { name: 'x' },
    });
    t.equal(missing.statusCode, 404);
  });

  await t.test('last active admin cannot be demoted or deactivated', async (t) => {
    // Alice is the only admin in this database.
    let res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { role: 'agent' },
    });
    t.equal(res.statusCode, 409);
    res = await h.app.inject({ method: 'DELETE', url: `/v1/users/${aliceId}`, headers: admin });
    t.equal(res.statusCode, 409);
    res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { status: 'inactive' },
    });
    t.equal(res.statusCode, 409);
    const second = await post({ email: 'root2@example.com', name: 'Root 2', role: 'admin' });
    t.equal(second.statusCode, 201);
    res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { role: 'agent' },
    });
    t.equal(res.statusCode, 200);
  });

  await t.test('deactivate and reactivate', async (t) => {
    const res = await h.app.inject({ method: 'DELETE', url: `/v1/users/${aliceId}`, headers: admin });
    t.equal(res.statusCode, 200);
    const data = body(res).data;
    t.equal(data.status, 'inactive');
    t.ok(Date.parse(data.deactivatedAt));
    const ev = await h.waitForEvent((e) => e.type === 'user.deactivated' && e.resourceId === aliceId);
    t.same(ev.changes?.status, { from: 'active', to: 'inactive' });
    await h.waitForNotice((n) => n.kind === 'user_deactivated' && n.userId === aliceId);
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/users/${aliceId}`, headers: admin });
    t.equal(again.statusCode, 200, 'deactivating twice is harmless');
    const read = body(
      await h.app.inject({ method: 'GET', url: `/v1/users/${aliceId}`, headers: admin }),
    ).data;
    t.equal(read.status, 'inactive');
    t.equal(read.deactivatedAt, data.deactivatedAt);
    const back = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers: admin,
      payload: { status: 'active' },
    });
    t.equal(body(back).data.status, 'active');
    t.equal(body(back).data.deactivatedAt, null);
    await h.waitForNotice((n) => n.kind === 'user_reactivated' && n.userId === aliceId);
  });

  await t.test('user events carry the user as GET /v1/users/:id shows it (snapshot)', async (t) => {
    const group = body(
      await h.app.inject({
        method: 'POST',
        url: '/v1/groups',
        headers: admin,
        payload: { name: 'Snapshots' },
      }),
    ).data.id as string;
    const res = await post({
      email: 'snap@example.com',
      name: 'Snap',
      role: 'viewer',
      groups: [group],
      metadata: { site: 'Lyon' },
    });
    const id = body(res).data.id as string;
    const read = async () =>
      body(await h.app.inject({ method: 'GET', url: `/v1/users/${id}`, headers: viewer })).data;
    const created = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === id);
    t.same(created.snapshot, await read(), 'user.created: what a viewer reads, group names included');
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${id}`,
      headers: admin,
      payload: { name: 'Snap Two', role: 'agent' },
    });
    const updated = await h.waitForEvent((e) => e.type === 'user.updated' && e.resourceId === id);
    const role = await h.waitForEvent((e) => e.type === 'user.role_changed' && e.resourceId === id);
    const now = await read();
    t.same(updated.snapshot, now, 'as it is after the change');
    t.same(role.snapshot, now, 'every event of the change carries it');
    await h.app.inject({ method: 'DELETE', url: `/v1/users/${id}`, headers: admin });
    const gone = await h.waitForEvent((e) => e.type === 'user.deactivated' && e.resourceId === id);
    t.equal((gone.snapshot as { status?: string } | undefined)?.status, 'inactive');
    t.notMatch(JSON.stringify([created, updated, gone]), /passwordHash|emailKey|\$argon/, 'no secret');
  });

  await t.test('/v1/me returns the caller with permissions = scopes', async (t) => {
    const headers = await h.headers('agent', { userId: aliceId, scopes: ['requests:read', 'users:read'] });
    const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers });
    t.equal(res.statusCode, 200);
    const me = body(res).data;
    t.equal(me.id, aliceId);
    t.equal(me.email, 'Alice@Example.com');
    t.same(me.permissions, ['requests:read', 'users:read']);
    t.same(me.scopes, me.permissions);
    t.same(me.groups, []);
    const ghost = await h.app.inject({ method: 'GET', url: '/v1/me', headers: await h.headers('viewer') });
    t.equal(ghost.statusCode, 401);
  });

  await t.test('a change made with an OAuth access token is recorded with source oauth', async (t) => {
    const headers = await h.headers('admin', { credential: { type: 'oauth', id: 'gnt_from_an_oauth_app' } });
    const res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${aliceId}`,
      headers,
      payload: { name: 'Alice via OAuth' },
    });
    t.equal(res.statusCode, 200);
    const ev = await h.waitForEvent(
      (e) =>
        e.type === 'user.updated' && e.resourceId === aliceId && e.changes?.name?.to === 'Alice via OAuth',
    );
    t.equal(ev.metadata.source, 'oauth', 'not api: the credential was an OAuth token');
  });
  await t.test(
    'untrusted keys: __proto__ and constructor.prototype in bodies, metadata and queries',
    async (t) => {
      const json = { ...admin, 'content-type': 'application/json' };
      const created = body(await post({ email: 'proto-keys@example.com', name: 'P', role: 'viewer' })).data
        .id;
      const clean = (what: string) =>
        t.equal(({} as Record<string, unknown>).polluted, undefined, `${what}: Object.prototype untouched`);
      const before = await h.stored.users.countDocuments();
      // Raw JSON: `__proto__` arrives as an own key, as from any client.
      const bodies: [string, string, string, RegExp][] = [
        [
          'POST',
          '/v1/users',
          '{"email":"p1@example.com","name":"P","role":"viewer","metadata":{"__proto__":"x"}}',
          /__proto__/,
        ],
        [
          'POST',
          '/v1/users',
          '{"email":"p2@example.com","name":"P","role":"viewer","metadata":{"constructor":"x"}}',
          /body\.metadata/,
        ],
        [
          'POST',
          '/v1/users',
          '{"email":"p3@example.com","name":"P","role":"viewer","metadata":{"prototype":"x"}}',
          /body\.metadata/,
        ],
        [
          'POST',
          '/v1/users',
          '{"email":"p4@example.com","name":"P","role":"viewer","__proto__":{"polluted":"yes"}}',
          /__proto__/,
        ],
        ['PATCH', `/v1/users/${created}`, '{"__proto__":{"role":"admin","polluted":"yes"}}', /__proto__/],
        ['PATCH', `/v1/users/${created}`, '{"constructor":{"prototype":{"polluted":"yes"}}}', /constructor/],
        ['PATCH', `/v1/users/${created}`, '{"metadata":{"__proto__":"x"}}', /__proto__/],
        ['PATCH', `/v1/users/${created}`, '{"metadata":{"constructor":"x"}}', /body\.metadata/],
      ];
      for (const [method, url, payload, message] of bodies) {
        const res = await h.app.inject({ method: method as 'POST', url, headers: json, payload });
        t.equal(res.statusCode, 400, `${method} ${payload}: ${res.body}`);
        t.match(body(res).error?.message, message, `${payload}: names the field`);
        clean(payload);
      }
      t.equal(await h.stored.users.countDocuments(), before, 'nothing created');
      const stored = await h.stored.users.findById(created).lean();
      t.equal(stored?.role, 'viewer', 'nothing changed');
      t.same(stored?.metadata ?? {}, {}, 'no metadata written');
      for (const query of [
        '__proto__[polluted]=yes',
        'constructor[prototype][polluted]=yes',
        '__proto__=x',
        'constructor=x',
      ]) {
        const res = await h.app.inject({ method: 'GET', url: `/v1/users?${query}`, headers: admin });
        t.equal(res.statusCode, 400, `?${query}: 400 (${res.body})`);
        t.equal(body(res).error.code, 'VALIDATION_ERROR');
        clean(query);
      }
    },
  );

  await t.test('users:write manages agents and viewers; only the admin scope touches admins', async (t) => {
    const hrSync = await h.headers('admin', { scopes: ['users:read', 'users:write'] });
    const make = async (email: string, role: string) =>
      body(await post({ email, name: email.split('@')[0], role })).data.id as string;
    const target = await make('hr-admin@example.com', 'admin');
    const agent = await make('hr-agent@example.com', 'agent');
    const group = body(
      await h.app.inject({ method: 'POST', url: '/v1/groups', headers: admin, payload: { name: 'HR Sync' } }),
    ).data.id as string;
    const refused: [string, 'POST' | 'PATCH' | 'DELETE', string, object | undefined][] = [
      ['creating an admin', 'POST', '/v1/users', { email: 'hr-new@example.com', name: 'N', role: 'admin' }],
      ['promoting an agent', 'PATCH', `/v1/users/${agent}`, { role: 'admin' }],
      ['demoting an admin', 'PATCH', `/v1/users/${target}`, { role: 'viewer' }],
      ['changing an admin', 'PATCH', `/v1/users/${target}`, { name: 'Renamed' }],
      ['deactivating an admin by PATCH', 'PATCH', `/v1/users/${target}`, { status: 'inactive' }],
      ['deactivating an admin', 'DELETE', `/v1/users/${target}`, undefined],
      ["an admin's groups", 'POST', `/v1/groups/${group}/members`, { userId: target }],
    ];
    for (const [what, method, url, payload] of refused) {
      const res = await h.app.inject({ method, url, headers: hrSync, ...(payload ? { payload } : {}) });
      t.equal(res.statusCode, 403, `${what}: 403 (${res.body})`);
      t.equal(body(res).error.code, 'FORBIDDEN');
      t.match(body(res).error.message, /admin scope/, `${what}: says the admin scope is needed`);
    }
    t.match(await h.stored.users.findById(target).lean(), {
      role: 'admin',
      status: 'active',
      name: 'hr-admin',
    });
    t.match(await h.stored.users.findById(agent).lean(), { role: 'agent' });
    t.equal(await h.stored.users.countDocuments({ email: 'hr-new@example.com' }), 0, 'no admin created');

    // Agents and viewers stay users:write's; the admin scope does it all.
    const allowed: [
      string,
      'POST' | 'PATCH' | 'DELETE',
      string,
      object | undefined,
      Record<string, string>,
    ][] = [
      [
        'create a viewer',
        'POST',
        '/v1/users',
        { email: 'hr-viewer@example.com', name: 'V', role: 'viewer' },
        hrSync,
      ],
      ['change an agent', 'PATCH', `/v1/users/${agent}`, { role: 'viewer' }, hrSync],
      ['deactivate a viewer', 'DELETE', `/v1/users/${agent}`, undefined, hrSync],
      ['the admin scope: demote an admin', 'PATCH', `/v1/users/${target}`, { role: 'agent' }, admin],
    ];
    for (const [what, method, url, payload, headers] of allowed) {
      const res = await h.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      t.ok(res.statusCode === 200 || res.statusCode === 201, `${what}: ${res.statusCode} ${res.body}`);
    }
  });
});
