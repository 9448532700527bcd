import t from 'tap';
import { authenticateScimToken, provisioningContext } from '../src/use-cases/identity-providers.js';
import { provisionUser } from '../src/use-cases/provisioning.js';
import { body, deskctl, harness } from './helpers.js';

t.test('deskctl idp: create (token once), list, show, rotate-token, disable, delete', async (t) => {
  const h = await harness(t);
  const run = (...args: string[]) => deskctl(h.cliEnv, [...args, '--json']);

  let res = await run(
    'idp',
    'create',
    'okta',
    '--kind',
    'scim',
    '--default-role',
    'viewer',
    '--group-role',
    'Desk Admins=admin',
  );
  t.equal(res.code, 0, res.stderr);
  const token = res.json.token as string;
  t.match(token, /^sdscim_okta_[A-Za-z0-9_-]{43}$/);
  t.match(res.json, {
    name: 'okta',
    kind: 'scim',
    defaultRole: 'viewer',
    groupRoles: [{ group: 'Desk Admins', role: 'admin' }],
  });
  const stored = await h.conn.db!.collection('identity_providers').findOne({ _id: 'okta' as never });
  t.notOk(JSON.stringify(stored).includes(token.slice(-43)), 'only a hash of the token is stored');
  const created = await h.waitForEvent(
    (e) => e.type === 'system.config_changed' && e.resourceId === 'idp:okta',
  );
  t.equal(created.metadata.source, 'cli');
  t.notOk(JSON.stringify(created).includes(token.slice(-43)), 'the event never carries the token');

  res = await run('idp', 'create', 'okta', '--kind', 'scim');
  t.equal(res.code, 1, 'a taken name');
  res = await run('idp', 'create', 'Bad Name', '--kind', 'scim');
  t.equal(res.code, 1);
  res = await run('idp', 'create', 'x', '--kind', 'saml');
  t.equal(res.code, 2, 'an unknown kind is a usage error');
  res = await run('idp', 'create', 'x', '--kind', 'scim', '--group-role', 'Admins');
  t.equal(res.code, 2, 'a malformed group rule is a usage error');

  res = await run('idp', 'list');
  t.same(
    res.json.identityProviders.map((p: { name: string }) => p.name),
    ['okta'],
  );
  res = await run('idp', 'show', 'okta');
  t.notOk('token' in res.json, 'show never prints the token');

  t.ok(await authenticateScimToken(h.deps, token), 'the token authenticates');
  res = await run('idp', 'rotate-token', 'okta', '--yes');
  t.equal(res.code, 0, res.stderr);
  t.equal(await authenticateScimToken(h.deps, token), null, 'the previous token stops at once');
  const rotated = res.json.token as string;
  t.ok(await authenticateScimToken(h.deps, rotated));
  t.equal(await authenticateScimToken(h.deps, `${rotated.slice(0, -1)}x`), null, 'a wrong secret');

  res = await run('idp', 'disable', 'okta');
  t.equal(res.json.disabled, true);
  t.equal(await authenticateScimToken(h.deps, rotated), null, 'a disabled connection is refused');
  await run('idp', 'enable', 'okta');
  const connection = (await authenticateScimToken(h.deps, rotated))!;
  t.ok(connection);

  const { user } = await provisionUser(h.deps, connection, provisioningContext(connection), {
    externalId: 'e1',
    email: 'leaver@example.com',
    name: 'Leaver',
    active: true,
  });
  res = await run('idp', 'delete', 'okta', '--yes');
  t.equal(res.code, 0, res.stderr);
  t.match(res.json, { name: 'okta', deleted: true, deactivatedUsers: 1 });
  t.equal((await h.deps.users.findById(user._id))?.status, 'inactive', 'its users are deactivated');
  t.equal(await authenticateScimToken(h.deps, rotated), null);
  const patched = await h.app.inject({
    method: 'PATCH',
    url: `/v1/users/${user._id}`,
    headers: await h.headers('admin'),
    payload: { name: 'Released' },
  });
  t.equal(patched.statusCode, 200, 'released: /v1 may change it again');
  t.equal(body(patched).data.name, 'Released');
  res = await run('idp', 'list');
  t.same(res.json.identityProviders, []);
  res = await run('idp', 'create', 'okta', '--kind', 'ldap');
  t.equal(res.code, 0, 'a deleted name can be used again');
  t.notOk('token' in res.json, 'an LDAP connection has no token');
});
