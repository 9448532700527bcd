import { newId } from '@support-desk/contracts';
import t from 'tap';
import { body, harness } from './helpers.js';

t.test('groups API', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const agent = await h.headers('agent');
  const inject = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    headers = admin,
  ) => h.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

  const user = async (email: string) =>
    body(await inject('POST', '/v1/users', { email, name: email.split('@')[0], role: 'agent' })).data
      .id as string;
  const u1 = await user('one@example.com');
  const u2 = await user('two@example.com');

  let gid = '';
  await t.test('create, unique names, validation, scope', async (t) => {
    let res = await inject('POST', '/v1/groups', { name: 'Tier 1', description: 'First line' });
    t.equal(res.statusCode, 201);
    gid = body(res).data.id;
    t.match(body(res).data, { name: 'Tier 1', description: 'First line', memberCount: 0 });
    t.match(gid, /^grp_/);
    const ev = await h.waitForEvent((e) => e.type === 'system.config_changed' && e.resourceId === gid);
    t.same(ev.changes?.name, { from: null, to: 'Tier 1' });
    res = await inject('POST', '/v1/groups', { name: 'tier 1' });
    t.equal(res.statusCode, 409);
    res = await inject('POST', '/v1/groups', { name: '' });
    t.equal(res.statusCode, 400);
    t.match(body(res).error.message, /body\.name/);
    res = await inject('POST', '/v1/groups', { description: 'x' });
    t.match(body(res).error.message, /body\.name is required/);
    res = await inject('POST', '/v1/groups', { name: 'x'.repeat(101) });
    t.equal(res.statusCode, 400);
    res = await inject('POST', '/v1/groups', { name: 'Nope' }, agent);
    t.equal(res.statusCode, 403);
    res = await inject('GET', '/v1/groups', undefined, agent);
    t.equal(res.statusCode, 200);
  });

  await t.test('membership via users and via members endpoints; memberCount', async (t) => {
    let res = await inject('POST', `/v1/groups/${gid}/members`, { userId: u1 });
    t.equal(res.statusCode, 200);
    t.same(body(res).data, { id: gid, name: 'Tier 1', memberCount: 1 });
    const ev = await h.waitForEvent(
      (e) => e.type === 'user.updated' && e.resourceId === u1 && !!e.changes?.groups,
    );
    t.same(ev.changes?.groups, { from: [], to: [gid] });
    res = await inject('POST', `/v1/groups/${gid}/members`, { userId: u1 });
    t.same(body(res).data.memberCount, 1, 'adding twice is idempotent');
    res = await inject('PATCH', `/v1/users/${u2}`, { groups: [gid] });
    t.equal(res.statusCode, 200);
    t.same(body(res).data.groups, [{ id: gid, name: 'Tier 1' }]);
    res = await inject('GET', '/v1/groups');
    t.same(body(res).data.groups, [{ id: gid, name: 'Tier 1', description: 'First line', memberCount: 2 }]);
    t.notOk(body(res).data.pagination);
    res = await inject('GET', `/v1/groups/${gid}/members?limit=1`);
    t.equal(res.statusCode, 200);
    t.same(body(res).data.pagination, {
      page: 1,
      limit: 1,
      total: 2,
      pages: 2,
      nextCursor: body(res).data.pagination.nextCursor,
    });
    t.equal(body(res).data.users[0].id, u2);
    res = await inject('GET', `/v1/users?groupId=${gid}`);
    t.equal(body(res).data.pagination.total, 2);
    res = await inject('GET', `/v1/users/${u1}`);
    t.same(body(res).data.groups, [{ id: gid, name: 'Tier 1' }]);
    res = await inject('DELETE', `/v1/groups/${gid}/members/${u1}`);
    t.same(body(res).data, { id: gid, name: 'Tier 1', memberCount: 1 });
    await h.waitForEvent(
      (e) =>
        e.type === 'user.updated' &&
        e.resourceId === u1 &&
        JSON.stringify(e.changes?.groups) === JSON.stringify({ from: [gid], to: [] }),
    );
  });

  await t.test('members endpoints: unknown ids and bad input', async (t) => {
    t.equal((await inject('POST', `/v1/groups/${newId('group')}/members`, { userId: u1 })).statusCode, 404);
    t.equal((await inject('POST', `/v1/groups/${gid}/members`, { userId: newId('user') })).statusCode, 404);
    t.equal((await inject('DELETE', `/v1/groups/${gid}/members/${newId('user')}`)).statusCode, 404);
    t.equal((await inject('DELETE', `/v1/groups/${newId('group')}/members/${u1}`)).statusCode, 404);
    t.equal((await inject('GET', `/v1/groups/${newId('group')}/members`)).statusCode, 404);
    let res = await inject('POST', `/v1/groups/${gid}/members`, {});
    t.equal(res.statusCode, 400);
    t.match(body(res).error.message, /body\.userId is required/);
    res = await inject('POST', `/v1/groups/${gid}/members`, { userId: 'grp_x' });
    t.match(body(res).error.message, /body\.userId/);
    res = await inject('GET', `/v1/groups/${gid}/members?limit=0`);
    t.equal(res.statusCode, 400);
    res = await inject('DELETE', `/v1/groups/bad/members/${u1}`);
    t.equal(res.statusCode, 404, 'a malformed group id names no group');
    t.match(body(res).error.message, /group ids look like grp_/);
  });

  await t.test('update and delete a group', async (t) => {
    const other = body(await inject('POST', '/v1/groups', { name: 'Tier 2' })).data.id;
    let res = await inject('PATCH', `/v1/groups/${gid}`, { name: 'Tier 2' });
    t.equal(res.statusCode, 409);
    res = await inject('PATCH', `/v1/groups/${gid}`, { name: 'Tier One', description: 'Renamed' });
    t.equal(res.statusCode, 200);
    t.match(body(res).data, { name: 'Tier One', description: 'Renamed', memberCount: 1 });
    const ev = await h.waitForEvent(
      (e) =>
        e.type === 'system.config_changed' &&
        e.resourceId === gid &&
        !!e.changes?.description &&
        e.changes.description.from === 'First line',
    );
    t.same(ev.changes?.name, { from: 'Tier 1', to: 'Tier One' });
    t.equal((await inject('PATCH', `/v1/groups/${gid}`, {})).statusCode, 400);
    res = await inject('GET', `/v1/groups/${gid}`);
    t.match(body(res).data, { id: gid, name: 'Tier One', memberCount: 1 });
    res = await inject('DELETE', `/v1/groups/${gid}`);
    t.same(body(res).data, { id: gid, deleted: true });
    await h.waitForEvent(
      (e) =>
        e.type === 'user.updated' && e.resourceId === u2 && JSON.stringify(e.changes?.groups?.to) === '[]',
    );
    t.equal((await inject('GET', `/v1/groups/${gid}`)).statusCode, 404);
    t.equal((await inject('DELETE', `/v1/groups/${gid}`)).statusCode, 404);
    res = await inject('GET', `/v1/users/${u2}`);
    t.same(body(res).data.groups, []);
    res = await inject('POST', '/v1/groups', { name: 'Tier One' });
    t.equal(res.statusCode, 201, 'a deleted group frees its name');
    res = await inject('GET', '/v1/groups');
    t.same(
      body(res)
        .data.groups.map((g: { id: string }) => g.id)
        .includes(other),
      true,
    );
  });
});
