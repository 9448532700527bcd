import t from 'tap';
import {
  createIdentityProvider,
  findIdentityProvider,
  provisioningContext,
} from '../src/use-cases/identity-providers.js';
import {
  changeGroupMembers,
  provisionGroup,
  removeProvisionedGroup,
} from '../src/use-cases/provisioning-groups.js';
import { provisionUser, roleFor, setUserActive } from '../src/use-cases/provisioning.js';
import { cliContext } from '../src/use-cases/deps.js';
import { body, harness } from './helpers.js';

t.test('provisioning: users and groups of an identity provider connection', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) });

  await createIdentityProvider(h.deps, cliContext(), {
    name: 'okta',
    kind: 'scim',
    defaultRole: 'viewer',
    groupRoles: [
      { group: '00g2', role: 'agent' },
      { group: '00g1', role: 'admin' },
    ],
  });
  const connection = await findIdentityProvider(h.deps, 'okta');
  const ctx = provisioningContext(connection, { requestId: 'req-1' });

  t.equal(
    roleFor(connection, [
      { id: 'grp_a', externalId: '00g1' },
      { id: 'grp_b', externalId: '00g2' },
    ]),
    'admin',
    'the highest rule wins, by external id',
  );
  t.equal(roleFor(connection, [{ id: '00g2', externalId: null }]), 'agent', 'or by Support Desk id');
  t.equal(roleFor(connection, [{ id: 'grp_c', externalId: 'Other' }]), 'viewer', 'else the default role');

  let userId = '';
  await t.test('create by external id, idempotent upsert, events with source and actor', async (t) => {
    const input = {
      externalId: '00u1',
      email: 'Ada@Example.com',
      name: 'Ada Lovelace',
      active: true,
      metadata: { department: 'Support' },
    };
    const first = await provisionUser(h.deps, connection, ctx, input);
    t.ok(first.created);
    userId = first.user._id;
    t.match(first.user, { identityProvider: 'okta', externalId: '00u1', role: 'viewer', status: 'active' });
    const again = await provisionUser(h.deps, connection, ctx, input);
    t.notOk(again.created, 'the same external id is the same user');
    t.equal(again.user._id, userId);
    const created = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === userId);
    t.equal(created.metadata.source, 'scim');
    t.same(created.actor, {
      id: 'idp:okta',
      name: 'okta (identity provider)',
      email: 'okta@idp.support-desk.local',
      role: 'system',
    });
    t.same(created.changes?.identityProvider, { from: null, to: 'okta' });
    const res = await inject('GET', `/v1/users/${userId}`);
    t.match(body(res).data, {
      identityProvider: 'okta',
      externalId: '00u1',
      metadata: { department: 'Support' },
    });
  });

  await t.test('update: email and name; deactivate; reactivate', async (t) => {
    const { user } = await provisionUser(h.deps, connection, ctx, {
      externalId: '00u1',
      email: 'ada.king@example.com',
      name: 'Ada King',
      active: true,
    });
    t.match(user, { email: 'ada.king@example.com', name: 'Ada King' });
    const updated = await h.waitForEvent((e) => e.type === 'user.updated' && e.resourceId === userId);
    t.same(updated.changes?.email, { from: 'Ada@Example.com', to: 'ada.king@example.com' });
    t.equal((await h.deps.users.findByEmail('ADA.KING@example.com'))?._id, userId, 'found by the new email');
    t.equal(await h.deps.users.findByEmail('ada@example.com'), null, 'not by the old one');

    await setUserActive(h.deps, connection, ctx, userId, false);
    const off = await h.waitForEvent((e) => e.type === 'user.deactivated' && e.resourceId === userId);
    t.equal(off.metadata.source, 'scim');
    await h.waitForNotice((n) => n.kind === 'user_deactivated' && n.userId === userId);
    await setUserActive(h.deps, connection, ctx, userId, true);
    await h.waitForNotice((n) => n.kind === 'user_reactivated' && n.userId === userId);
  });

  await t.test('an email another user holds is a conflict', async (t) => {
    await inject('POST', '/v1/users', { email: 'local@example.com', name: 'Local', role: 'agent' });
    await t.rejects(
      provisionUser(h.deps, connection, ctx, {
        externalId: '00u2',
        email: 'LOCAL@example.com',
        name: 'X',
        active: true,
      }),
      { code: 'CONFLICT' },
    );
    t.equal(
      await h.deps.identityProviders.resolveExternal('user', 'okta', '00u2'),
      null,
      'the claim was released',
    );
    await t.rejects(
      provisionUser(h.deps, connection, ctx, {
        externalId: '00u1',
        email: 'local@example.com',
        name: 'X',
        active: true,
      }),
      { code: 'CONFLICT' },
    );
  });

  let groupId = '';
  await t.test('groups: create, members with the group → role rule, rename, delete', async (t) => {
    const { group } = await provisionGroup(h.deps, connection, ctx, {
      externalId: '00g1',
      displayName: 'Desk Admins',
    });
    groupId = group._id;
    t.match(group, { identityProvider: 'okta', externalId: '00g1', name: 'Desk Admins' });
    await changeGroupMembers(h.deps, connection, ctx, groupId, { add: [userId] });
    const promoted = await h.waitForEvent((e) => e.type === 'user.role_changed' && e.resourceId === userId);
    t.same(promoted.changes?.role, { from: 'viewer', to: 'admin' });
    t.equal(promoted.metadata.source, 'scim');
    const res = await inject('GET', `/v1/groups/${groupId}`);
    t.match(body(res).data, { memberCount: 1, identityProvider: 'okta', externalId: '00g1' });

    // A display name is the provider's to change (and anyone's who may rename a group there):
    // named like another rule's group, it gives nothing; the rule follows the external id.
    const renamed = await provisionGroup(h.deps, connection, ctx, {
      externalId: '00g1',
      displayName: '00g2',
    });
    t.equal(renamed.group._id, groupId);
    t.equal(renamed.group.name, '00g2');
    t.equal((await h.deps.users.findById(userId))?.role, 'admin', 'a rename changes no role');
    const other = await provisionGroup(h.deps, connection, ctx, { externalId: '00g8', displayName: '00g1' });
    const member = await provisionUser(h.deps, connection, ctx, {
      externalId: '00u8',
      email: 'named@example.com',
      name: 'Named',
      active: true,
    });
    await changeGroupMembers(h.deps, connection, ctx, other.group._id, { add: [member.user._id] });
    t.equal(
      (await h.deps.users.findById(member.user._id))?.role,
      'viewer',
      "a group displayed with a rule's key gives nothing",
    );
    await removeProvisionedGroup(h.deps, connection, ctx, other.group._id);

    await removeProvisionedGroup(h.deps, connection, ctx, groupId);
    t.same((await h.deps.users.findById(userId))?.groups, [], 'members left the group');
    t.equal(await h.deps.identityProviders.resolveExternal('group', 'okta', '00g1'), null);
  });

  await t.test('/v1 refuses changes of what the provider owns (409 naming it)', async (t) => {
    const { group } = await provisionGroup(h.deps, connection, ctx, {
      externalId: '00g2',
      displayName: 'Support Agents',
    });
    let res = await inject('PATCH', `/v1/users/${userId}`, { name: 'Someone Else' });
    t.equal(res.statusCode, 409);
    t.match(body(res).error, { code: 'CONFLICT', message: /identity provider "okta": name/ });
    res = await inject('PATCH', `/v1/users/${userId}`, { name: 'Ada King', isVip: true });
    t.equal(res.statusCode, 200, 'the same name and a local field are fine');
    res = await inject('DELETE', `/v1/users/${userId}`);
    t.equal(res.statusCode, 409);
    res = await inject('PATCH', `/v1/groups/${group._id}`, { name: 'Renamed' });
    t.equal(res.statusCode, 409);
    res = await inject('PATCH', `/v1/groups/${group._id}`, { description: 'Our agents' });
    t.equal(res.statusCode, 200, 'the description stays local');
    res = await inject('DELETE', `/v1/groups/${group._id}`);
    t.equal(res.statusCode, 409);
    const local = body(
      await inject('POST', '/v1/users', { email: 'l2@example.com', name: 'L2', role: 'agent' }),
    ).data.id;
    res = await inject('POST', `/v1/groups/${group._id}/members`, { userId: local });
    t.equal(res.statusCode, 409);
    res = await inject('PATCH', `/v1/users/${local}`, { groups: [group._id] });
    t.equal(res.statusCode, 409, 'membership of a provisioned group through the user too');
    res = await inject('POST', '/v1/users', {
      email: 'x@example.com',
      name: 'X',
      role: 'agent',
      identityProvider: 'okta',
    });
    t.equal(res.statusCode, 409, '/v1 cannot create a user owned by a connection');
  });
});
