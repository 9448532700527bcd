import t from 'tap';
import {
  authenticateScimToken,
  body,
  harness,
  provisioningContext,
  provisionUser,
} from '@support-desk/identity/testing';
import { deskctl } from './helpers.js';

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
    warnings: [/members of group "Desk Admins" become admins/],
  });
  res = await run('idp', 'show', 'okta');
  t.match(res.json.warnings, [/become admins/], 'shown every time');
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

t.test(
  'deskctl idp create prints the real SCIM URL; users link hands an existing user to a provider',
  async (t) => {
    const h = await harness(t);
    const env = { ...h.cliEnv, OAUTH_ISSUER: 'https://desk.example.com' };
    const created = await deskctl(env, ['idp', 'create', 'entra', '--kind', 'scim']);
    t.equal(created.code, 0, created.stderr);
    t.match(
      created.stdout,
      /SCIM base URL: https:\/\/desk\.example\.com\/scim\/v2\n/,
      "the gateway's public URL",
    );
    t.notMatch(created.stdout, /<gateway>/);
    const token = /bearer token: +(\S+)/.exec(created.stdout)![1];
    const scim = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      h.app.inject({
        method,
        url: `/scim/v2${url}`,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload ? { 'content-type': 'application/scim+json' } : {}),
        },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
    const run = (...args: string[]) => deskctl(h.cliEnv, [...args, '--json']);

    const local = (
      await run('users', 'create', '--email', 'grace@example.com', '--name', 'Grace', '--role', 'agent')
    ).json;
    const other = (
      await run('users', 'create', '--email', 'alan@example.com', '--name', 'Alan', '--role', 'agent')
    ).json;
    let res = await scim('POST', '/Users', {
      userName: 'grace@example.com',
      externalId: 'ent-grace',
      active: true,
    });
    t.equal(res.statusCode, 409, 'a provider never takes over an existing local user by itself');
    res = await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "ent-grace"')}`);
    t.equal(body(res).totalResults, 0);

    let cli = await run('users', 'link', 'grace@example.com', '--idp', 'entra', '--external-id', 'ent-grace');
    t.equal(cli.code, 0, cli.stderr);
    t.match(cli.json, { id: local.id, identityProvider: 'entra', externalId: 'ent-grace', linked: true });
    const linked = await h.waitForEvent((e) => e.type === 'user.updated' && e.resourceId === local.id);
    t.same(linked.changes, {
      identityProvider: { from: 'local', to: 'entra' },
      externalId: { from: null, to: 'ent-grace' },
    });
    t.equal(linked.metadata.source, 'cli', 'in the audit log like every admin change');

    res = await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "ent-grace"')}`);
    t.equal(body(res).Resources[0]?.id, local.id, "the provider's look-up finds the user");
    res = await scim('PATCH', `/Users/${local.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'Replace', path: 'displayName', value: 'Grace Hopper' }],
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal((await h.deps.users.findById(local.id))?.name, 'Grace Hopper', 'and its SCIM calls manage them');
    res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${local.id}`,
      headers: await h.headers('admin'),
      payload: { name: 'Local Edit' },
    });
    t.equal(res.statusCode, 409, '/v1 no longer changes what the provider owns');

    cli = await run('users', 'link', 'grace@example.com', '--idp', 'entra', '--external-id', 'ent-grace');
    t.match(cli.json, { linked: false }, 'the same link again changes nothing');
    const refused: [string, string[], RegExp][] = [
      [
        "another user's external id",
        ['alan@example.com', '--idp', 'entra', '--external-id', 'ent-grace'],
        /already linked to user grace@example\.com/,
      ],
      [
        'a user already linked (to another id)',
        ['grace@example.com', '--idp', 'entra', '--external-id', 'ent-2'],
        /already linked to "entra"/,
      ],
      ['an unknown provider', ['alan@example.com', '--idp', 'nope', '--external-id', 'x'], /not found/],
    ];
    await deskctl(h.cliEnv, ['idp', 'create', 'okta', '--kind', 'scim']);
    refused.push([
      'a user managed by another provider',
      ['grace@example.com', '--idp', 'okta', '--external-id', 'okta-grace'],
      /managed by identity provider "entra"/,
    ]);
    for (const [what, args, message] of refused) {
      const r = await deskctl(h.cliEnv, ['users', 'link', ...args]);
      t.equal(r.code, 1, what);
      t.match(r.stderr, message, `${what}: ${r.stderr.trim()}`);
    }
    t.equal((await h.deps.users.findById(other.id))?.identityProvider, 'local', 'nothing was taken');
    const usage = await deskctl(h.cliEnv, ['users', 'link', 'alan@example.com', '--idp', 'entra']);
    t.equal(usage.code, 2, '--external-id is required');
  },
);
