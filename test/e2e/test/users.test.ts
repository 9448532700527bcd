import { randomBytes } from 'node:crypto';
// Users, /me, groups and membership through the gateway; deactivation cuts off the user's key at once.
import { CreatedUser, DeactivatedUser, Group, Me, UserDetail, UserListItem } from '@support-desk/contracts';
import t from 'tap';
import { cast, createActor } from '../src/actors.js';
import { expectError, expectKeys, expectOk, expectShape, ISO_DATE } from '../src/expect.js';
import { ABSENT } from '../src/fixtures.js';
import { type Json, qs } from '../src/http.js';
import { Ledger } from '../src/ledger.js';
import { AT_ONCE_MS, eventually, startStack } from '../src/stack.js';
import { createGroup, createUser } from '../src/world.js';

const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);
const ledger = new Ledger();

const LIST_COLUMNS = ['id', 'email', 'name', 'role', 'status', 'isVip', 'groups', 'createdAt', 'lastLoginAt'];

async function userEvents(id: string, until: (es: Json[]) => boolean): Promise<Json[]> {
  let last: Json[] = [];
  try {
    return await eventually(async () => {
      last = (await admin.api.get(`/v1/events?resourceId=${id}&limit=100`)).json?.data?.events ?? [];
      return until(last) ? last : null;
    });
  } catch {
    return last;
  }
}

t.test('/me with an API key: profile, permissions and scopes', async (t) => {
  const cases = [
    [admin, ['requests:read', 'requests:write', 'users:read', 'users:write', 'admin']],
    [agent, ['requests:read', 'requests:write', 'users:read']],
    [viewer, ['requests:read', 'users:read']],
  ] as const;
  for (const [who, scopes] of cases) {
    const me = expectOk(t, await who.api.get('/v1/me'), 200, `GET /v1/me as ${who.role}`);
    expectShape(t, Me, me, `/me (${who.role})`);
    t.equal(me?.id, who.id, 'id');
    t.equal(me?.email, who.email, 'email');
    t.equal(me?.name, who.name, 'name');
    t.equal(me?.role, who.role, 'role');
    t.ok(Array.isArray(me?.groups), 'groups array');
    t.same([...(me?.permissions ?? [])].sort(), [...scopes].sort(), `${who.role}: permissions`);
    t.same(me?.scopes, me?.permissions, 'scopes = permissions');
  }
  // A key with fewer scopes than its owner's role: effective scopes are the intersection.
  const narrow = await createActor(stack, 'admin', 'narrow-admin', { scopes: ['requests:read'] });
  const me = expectOk(t, await narrow.api.get('/v1/me'), 200, '/me with a requests:read key of an admin');
  t.same(me?.permissions, ['requests:read'], 'credential scopes ∩ role scopes');
  expectError(t, await narrow.api.get('/v1/users'), 403, 'FORBIDDEN', 'narrow key cannot read users');
  // An agent key asking for admin gets only what agents may do.
  const greedy = await createActor(stack, 'agent', 'greedy-agent', { scopes: ['admin'] });
  const gme = expectOk(t, await greedy.api.get('/v1/me'), 200, '/me with an admin-scoped key of an agent');
  t.notOk(gme?.permissions?.includes('admin'), 'no admin scope for an agent');
  t.notOk(gme?.permissions?.includes('users:write'), 'no users:write for an agent');
  expectError(
    t,
    await greedy.api.delete(`/v1/requests/${ABSENT.request}`),
    403,
    'FORBIDDEN',
    'agent with admin-scoped key cannot DELETE',
  );
});

t.test('users: create → active, read, list columns vs full user', async (t) => {
  const g = await createGroup(t, admin.api);
  const res = await admin.api.post('/v1/users', {
    email: `Grace.Hopper.${stack.run}@Example.com`,
    name: 'Grace Hopper',
    role: 'agent',
    groups: [g.id],
    isVip: true,
    metadata: { department: 'Navy', location: 'Arlington' },
  });
  const u = expectOk(t, res, 201, 'POST /v1/users');
  expectShape(t, CreatedUser, u, 'create response');
  for (const f of ['id', 'email', 'name', 'role', 'status', 'createdAt'])
    t.ok(u && f in u, `create response has ${f}`);
  t.equal(u?.status, 'active', 'a new user is active');
  t.match(u?.id, /^usr_/, 'id prefix usr_');
  t.match(u?.createdAt, ISO_DATE, 'createdAt');
  ledger.record(u.id, 'user.created');

  const full = expectOk(t, await admin.api.get(`/v1/users/${u.id}`), 200, 'GET /v1/users/:id');
  expectShape(t, UserDetail, full, 'full user');
  t.equal(full?.identityProvider, 'local', 'identityProvider local');
  t.same(full?.metadata, { department: 'Navy', location: 'Arlington' }, 'metadata');
  t.same(full?.groups, [{ id: g.id, name: g.name }], 'groups [{id, name}]');
  t.equal(full?.isVip, true, 'isVip');
  t.match(full?.updatedAt, ISO_DATE, 'updatedAt (single read)');
  const list = expectOk(t, await admin.api.get(`/v1/users${qs({ search: 'grace hopper' })}`), 200, 'search');
  const item = list?.users?.find((x: Json) => x.id === u.id);
  t.ok(item, 'listed');
  if (item) {
    expectShape(t, UserListItem, item, 'list item');
    expectKeys(t, item, LIST_COLUMNS, 'list columns (no updatedAt, identityProvider, metadata)');
  }
  // bad input and conflicts write nothing
  expectError(
    t,
    await admin.api.post('/v1/users', { email: 'not-an-email', name: 'x', role: 'agent' }),
    400,
    'VALIDATION_ERROR',
    'bad email',
  );
  expectError(
    t,
    await admin.api.post('/v1/users', { email: `z.${stack.run}@example.com`, name: 'x', role: 'boss' }),
    400,
    'VALIDATION_ERROR',
    'bad role',
  );
  expectError(
    t,
    await admin.api.post('/v1/users', {
      email: `z.${stack.run}@example.com`,
      name: 'x',
      role: 'agent',
      groups: [ABSENT.group],
    }),
    400,
    'VALIDATION_ERROR',
    'unknown group',
  );
  expectError(
    t,
    await admin.api.post('/v1/users', {
      email: `grace.hopper.${stack.run}@example.com`,
      name: 'Dup',
      role: 'viewer',
    }),
    409,
    'CONFLICT',
    'duplicate email (case-insensitive)',
  );
  expectError(
    t,
    await agent.api.post('/v1/users', { email: `a.${stack.run}@example.com`, name: 'x', role: 'viewer' }),
    403,
    'FORBIDDEN',
    'agent creates a user',
  );
  expectError(t, await admin.api.get(`/v1/users/${ABSENT.user}`), 404, 'NOT_FOUND', 'unknown user');
});

t.test('users: role change → user.role_changed; update → changed fields + updatedAt', async (t) => {
  const u = await createUser(t, admin.api, { role: 'viewer' }, ledger);
  const res = expectOk(t, await admin.api.patch(`/v1/users/${u.id}`, { role: 'agent' }), 200, 'PATCH role');
  t.equal(res?.id, u.id, 'id');
  t.equal(res?.role, 'agent', 'changed field role');
  t.match(res?.updatedAt, ISO_DATE, 'updatedAt');
  t.notOk('isVip' in (res ?? {}), 'unchanged fields are not returned');
  ledger.record(u.id, 'user.role_changed');
  const evs = await userEvents(u.id, (es) => es.some((e) => e.type === 'user.role_changed'));
  t.same(
    evs.find((e) => e.type === 'user.role_changed')?.changes?.role,
    { from: 'viewer', to: 'agent' },
    'changes.role {from, to}',
  );

  const vip = expectOk(
    t,
    await admin.api.patch(`/v1/users/${u.id}`, { isVip: true, name: 'Renamed' }),
    200,
    'PATCH isVip + name',
  );
  t.equal(vip?.isVip, true, 'isVip returned');
  t.equal(vip?.name, 'Renamed', 'name returned');
  ledger.record(u.id, 'user.updated');
  const read = expectOk(t, await admin.api.get(`/v1/users/${u.id}`), 200, 'read');
  t.equal(read?.role, 'agent', 'role stored');
  t.equal(read?.isVip, true, 'isVip stored');
  expectError(
    t,
    await admin.api.patch(`/v1/users/${u.id}`, { role: 'owner' }),
    400,
    'VALIDATION_ERROR',
    'bad role',
  );
  expectError(
    t,
    await admin.api.patch(`/v1/users/${ABSENT.user}`, { name: 'x' }),
    404,
    'NOT_FOUND',
    'unknown user',
  );
  expectError(
    t,
    await agent.api.patch(`/v1/users/${u.id}`, { name: 'x' }),
    403,
    'FORBIDDEN',
    'agent updates a user',
  );
});

t.test('users: DELETE → inactive with deactivatedAt, history kept, key refused at once', async (t) => {
  const leaver = await createActor(stack, 'agent', 'leaver');
  ledger.record(leaver.id, 'user.created');
  expectOk(t, await leaver.api.get('/v1/me'), 200, "the leaver's key works");
  expectOk(t, await leaver.api.get('/v1/requests'), 200, 'and is cached by the gateway');
  expectError(t, await agent.api.delete(`/v1/users/${leaver.id}`), 403, 'FORBIDDEN', 'DELETE by a non-admin');

  const del = expectOk(t, await admin.api.delete(`/v1/users/${leaver.id}`), 200, 'DELETE /v1/users/:id');
  expectShape(t, DeactivatedUser, del, 'deactivation response');
  expectKeys(t, del, ['id', 'status', 'deactivatedAt'], 'spec: id, status, deactivatedAt');
  t.equal(del?.status, 'inactive', 'inactive');
  t.match(del?.deactivatedAt, ISO_DATE, 'deactivatedAt');
  ledger.record(leaver.id, 'user.deactivated');

  // "at once": refused within a bound well under the gateway's credential cache TTL (30 s).
  const refused = await eventually(async () => (await leaver.api.get('/v1/me')).status === 401, {
    timeoutMs: AT_ONCE_MS,
    intervalMs: 50,
    what: "the deactivated user's key to be refused",
  }).catch(() => false);
  t.ok(
    refused,
    `the deactivated user's API key is refused (401) within ${AT_ONCE_MS} ms (well under the 30 s credential cache: the notice path, not expiry)`,
  );
  expectError(t, await leaver.api.get('/v1/requests'), 401, 'UNAUTHORIZED', 'key of an inactive user');

  const read = expectOk(t, await admin.api.get(`/v1/users/${leaver.id}`), 200, 'the user is kept');
  t.equal(read?.status, 'inactive', 'status inactive');
  t.equal(read?.deactivatedAt, del?.deactivatedAt, 'deactivatedAt kept');
  const inactive = expectOk(
    t,
    await admin.api.get(`/v1/users?status=inactive&limit=100`),
    200,
    'status=inactive',
  );
  t.ok(
    inactive?.users?.some((x: Json) => x.id === leaver.id),
    'listed under status=inactive',
  );
  const history = await userEvents(leaver.id, (es) => es.some((e) => e.type === 'user.deactivated'));
  t.ok(
    history.some((e) => e.type === 'user.created'),
    'history kept: user.created still there',
  );
  t.ok(
    history.some((e) => e.type === 'user.deactivated'),
    'user.deactivated recorded',
  );
});

t.test('users: every filter, page and limit', async (t) => {
  const g = await createGroup(t, admin.api);
  const tag = `q${randomBytes(4).toString('hex')}`; // in these users' names and emails only
  const made = [
    await createUser(
      t,
      admin.api,
      { email: `f1.${tag}@example.com`, name: `Filter One ${tag}`, role: 'agent', groups: [g.id] },
      ledger,
    ),
    await createUser(
      t,
      admin.api,
      { email: `f2.${tag}@example.com`, name: `Filter Two ${tag}`, role: 'viewer', isVip: true },
      ledger,
    ),
    await createUser(
      t,
      admin.api,
      {
        email: `f3.${tag}@example.com`,
        name: `Filter Three ${tag}`,
        role: 'admin',
        groups: [g.id],
        isVip: true,
      },
      ledger,
    ),
    await createUser(
      t,
      admin.api,
      { email: `f4.a.b.${tag}@example.com`, name: `Dots ${tag}`, role: 'viewer' },
      ledger,
    ),
  ];
  const ids = async (q: Record<string, string | boolean>) => {
    const data = expectOk(
      t,
      await admin.api.get(`/v1/users${qs({ ...q, search: (q.search as string) ?? tag, limit: 100 })}`),
      200,
      `users ${qs(q)}`,
    );
    return ((data?.users ?? []) as Json[]).map((u) => u.id).sort();
  };
  const idsOf = (...i: number[]) => i.map((k) => made[k].id).sort();
  t.same(await ids({}), idsOf(0, 1, 2, 3), `search "${tag}" (name or email substring)`);
  t.same(await ids({ search: `FILTER TWO ${tag.toUpperCase()}` }), idsOf(1), 'search is case-insensitive');
  t.same(await ids({ search: `f4.a.b.${tag}` }), idsOf(3), 'search by email');
  t.same(await ids({ search: '.*' }), [], 'regex characters are literal: ".*" matches nobody');
  t.same(await ids({ search: '(' }), [], 'an unbalanced "(" is just a character (no 500)');
  t.same(await ids({ role: 'viewer' }), idsOf(1, 3), 'role');
  t.same(await ids({ isVip: true }), idsOf(1, 2), 'isVip=true');
  t.same(await ids({ isVip: false }), idsOf(0, 3), 'isVip=false');
  t.same(await ids({ groupId: g.id }), idsOf(0, 2), 'groupId');
  t.same(await ids({ status: 'active' }), idsOf(0, 1, 2, 3), 'status=active');
  t.same(await ids({ role: 'admin', isVip: true, groupId: g.id }), idsOf(2), 'filters combine');

  const all = expectOk(t, await admin.api.get('/v1/users'), 200, 'defaults');
  const total = all?.pagination?.total;
  t.same(
    all?.pagination,
    { page: 1, limit: 20, total, pages: Math.ceil(total / 20), nextCursor: all?.pagination?.nextCursor },
    'defaults page 1, limit 20 (and a cursor to continue with)',
  );
  const small = expectOk(t, await admin.api.get('/v1/users?limit=2&page=2'), 200, 'limit 2 page 2');
  t.same(
    small?.pagination,
    { page: 2, limit: 2, total, pages: Math.ceil(total / 2), nextCursor: small?.pagination?.nextCursor },
    'page/limit echoed',
  );
  t.equal(small?.users?.length, Math.min(2, Math.max(0, total - 2)), 'two per page');
  const clamp = expectOk(t, await admin.api.get('/v1/users?limit=500'), 200, 'limit 500');
  t.equal(clamp?.pagination?.limit, 100, 'limit clamped to 100');
  for (const q of [
    'limit=0',
    'page=0',
    'limit=x',
    'role=owner',
    'status=gone',
    'isVip=maybe',
    'groupId=g1',
    'shoeSize=9',
  ]) {
    const res = await admin.api.get(`/v1/users?${q}`);
    expectError(t, res, 400, 'VALIDATION_ERROR', `GET /v1/users?${q}`);
    t.match(res.json?.error?.message, new RegExp(q.split('=')[0]), 'the message names the parameter');
  }
});

t.test('groups and membership with memberCount', async (t) => {
  const g = await createGroup(t, admin.api, `Tier 2 ${stack.run}`, 'Second line');
  const u1 = await createUser(t, admin.api, { role: 'agent' }, ledger);
  const u2 = await createUser(t, admin.api, { role: 'agent' }, ledger);
  const listed = expectOk(t, await agent.api.get('/v1/groups'), 200, 'GET /v1/groups');
  expectKeys(t, listed, ['groups'], 'data.groups only (no pagination object)');
  const mine = listed?.groups?.find((x: Json) => x.id === g.id);
  expectShape(t, Group, mine, 'group');
  expectKeys(t, mine, ['id', 'name', 'description', 'memberCount'], 'group fields');
  t.equal(mine?.memberCount, 0, 'empty group');
  t.match(g.id, /^grp_/, 'id prefix grp_');

  const add1 = expectOk(
    t,
    await admin.api.post(`/v1/groups/${g.id}/members`, { userId: u1.id }),
    200,
    'add member 1',
  );
  t.equal(add1?.memberCount, 1, 'memberCount 1');
  ledger.record(u1.id, 'user.updated');
  const again = expectOk(
    t,
    await admin.api.post(`/v1/groups/${g.id}/members`, { userId: u1.id }),
    200,
    'add member 1 again',
  );
  t.equal(again?.memberCount, 1, 'idempotent: still 1');
  const add2 = expectOk(
    t,
    await admin.api.post(`/v1/groups/${g.id}/members`, { userId: u2.id }),
    200,
    'add member 2',
  );
  t.equal(add2?.memberCount, 2, 'memberCount 2');
  ledger.record(u2.id, 'user.updated');
  const after = expectOk(t, await agent.api.get('/v1/groups'), 200, 'groups again');
  t.equal(
    after?.groups?.find((x: Json) => x.id === g.id)?.memberCount,
    2,
    'GET /v1/groups shows memberCount 2',
  );

  const members = expectOk(t, await agent.api.get(`/v1/groups/${g.id}/members`), 200, 'GET members');
  t.same(members?.users?.map((x: Json) => x.id).sort(), [u1.id, u2.id].sort(), 'both members');
  t.same(
    members?.pagination,
    { page: 1, limit: 20, total: 2, pages: 1, nextCursor: null },
    'members are paginated (the last page: no cursor onwards)',
  );
  for (const m of members?.users ?? []) expectShape(t, UserListItem, m, 'member (user list columns)');
  const page = expectOk(
    t,
    await agent.api.get(`/v1/groups/${g.id}/members?limit=1&page=2`),
    200,
    'members page 2',
  );
  t.equal(page?.users?.length, 1, 'one per page');
  const u1read = expectOk(t, await admin.api.get(`/v1/users/${u1.id}`), 200, 'member read');
  t.same(u1read?.groups, [{ id: g.id, name: g.name }], "the user's groups include the group");
  const byGroup = expectOk(t, await admin.api.get(`/v1/users?groupId=${g.id}`), 200, 'users?groupId');
  t.equal(byGroup?.pagination?.total, 2, 'users?groupId counts the members');

  const rm = expectOk(
    t,
    await admin.api.delete(`/v1/groups/${g.id}/members/${u1.id}`),
    200,
    'remove member 1',
  );
  t.equal(rm?.memberCount, 1, 'memberCount back to 1');
  ledger.record(u1.id, 'user.updated');
  expectError(
    t,
    await admin.api.delete(`/v1/groups/${g.id}/members/${ABSENT.user}`),
    404,
    'NOT_FOUND',
    'remove unknown user',
  );
  expectError(
    t,
    await admin.api.post(`/v1/groups/${ABSENT.group}/members`, { userId: u1.id }),
    404,
    'NOT_FOUND',
    'add to unknown group',
  );
  expectError(
    t,
    await admin.api.post(`/v1/groups/${g.id}/members`, { userId: ABSENT.user }),
    404,
    'NOT_FOUND',
    'add unknown user',
  );
  expectError(
    t,
    await admin.api.post(`/v1/groups/${g.id}/members`, {}),
    400,
    'VALIDATION_ERROR',
    'add without userId',
  );
  expectError(
    t,
    await agent.api.post(`/v1/groups/${g.id}/members`, { userId: u1.id }),
    403,
    'FORBIDDEN',
    'agent manages membership',
  );
  expectError(
    t,
    await admin.api.post('/v1/groups', { name: `Tier 2 ${stack.run}` }),
    409,
    'CONFLICT',
    'duplicate group name',
  );
  // The membership change is recorded on the user as changes.groups.
  const evs = await userEvents(u1.id, (es) => es.filter((e) => e.type === 'user.updated').length >= 2);
  t.ok(
    evs.some((e) => e.type === 'user.updated' && e.changes?.groups),
    'user.updated with changes.groups',
  );
});

t.test('audit completeness: every write of this file produced exactly its events', async (t) => {
  await ledger.verify(t, admin.api);
});
