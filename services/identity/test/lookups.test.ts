// The two look-ups that keep hot reads on `_id`: a user's email entry (user_emails) and the group
// names a replica remembers for user views.
import { buildEvent, systemContext } from '@support-desk/platform/core';
import { eventually, publishEvent } from '@support-desk/platform/testing';
import t from 'tap';
import { cliContext } from '../src/use-cases/deps.js';
import { login } from '../src/use-cases/login.js';
import { findUserByEmail } from '../src/use-cases/user-lookups.js';
import { createUser } from '../src/use-cases/users.js';
import { body, harness } from './helpers.js';

t.test('a user stored without its email entry is still found by email, and gets one', async (t) => {
  const h = await harness(t);
  const password = 'correct horse battery staple';
  const user = await createUser(h.deps, cliContext(), {
    email: 'Legacy@Example.com',
    name: 'Legacy',
    role: 'agent',
    password,
  });
  const entries = h.conn.collection('user_emails');
  t.same(await entries.findOne({ _id: 'legacy@example.com' as never }), {
    _id: 'legacy@example.com',
    userId: user.id,
  });
  // As a release before the entries left it (or a crash between the two writes).
  await entries.deleteOne({ _id: 'legacy@example.com' as never });
  t.equal((await findUserByEmail(h.deps, 'LEGACY@example.com'))?._id, user.id, 'found by its key');
  t.same(await entries.findOne({ _id: 'legacy@example.com' as never }), {
    _id: 'legacy@example.com',
    userId: user.id,
  });
  const meta = { ip: '10.0.0.1', userAgent: null, requestId: 'r1' };
  t.equal((await login(h.deps, { email: 'legacy@example.com', password, ...meta })).ok, true, 'signs in');
  t.equal(await findUserByEmail(h.deps, 'nobody@example.com'), null, 'an unknown email is nobody');
});

t.test('group names in user views follow a change made by another replica', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const group = body(
    await h.app.inject({ method: 'POST', url: '/v1/groups', headers: admin, payload: { name: 'Old name' } }),
  ).data;
  const user = await createUser(h.deps, cliContext(), {
    email: 'member@example.com',
    name: 'Member',
    role: 'agent',
    groups: [group.id],
  });
  const groupsOfUser = async () =>
    body(await h.app.inject({ method: 'GET', url: `/v1/users/${user.id}`, headers: admin })).data.groups;
  t.same(await groupsOfUser(), [{ id: group.id, name: 'Old name' }]);

  // Another replica renames it: its write lands in the store, its event on the events subject.
  await h.conn
    .collection('groups')
    .updateOne({ _id: group.id as never }, { $set: { name: 'New name', nameKey: 'new name' } });
  await publishEvent(
    h.nc,
    h.names,
    buildEvent('system.config_changed', group.id, systemContext(), {
      name: { from: 'Old name', to: 'New name' },
    }),
  );
  await eventually(async () => (await groupsOfUser())[0]?.name === 'New name', {
    timeoutMs: 5000,
    what: 'the new name in the user view',
  });

  // This replica's own change applies at once.
  await h.app.inject({
    method: 'PATCH',
    url: `/v1/groups/${group.id}`,
    headers: admin,
    payload: { name: 'Newest name' },
  });
  t.same(await groupsOfUser(), [{ id: group.id, name: 'Newest name' }]);
  await h.app.inject({ method: 'DELETE', url: `/v1/groups/${group.id}`, headers: admin });
  t.same(await groupsOfUser(), [], 'a deleted group is no longer named');
});
