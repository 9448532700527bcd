// An Okta-style SCIM provisioning session through the gateway: create, update, group push,
// deactivate; then the users, groups and audit log as the spec's resources describe them.
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectOk } from '../src/expect.js';
import { type Json, request } from '../src/http.js';
import { eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin } = await cast(stack);

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

t.test('Okta-style provisioning session through the gateway', async (t) => {
  const idp = await stack.deskctlJson([
    'idp',
    'create',
    'okta',
    '--kind',
    'scim',
    '--default-role',
    'viewer',
    '--group-role',
    'okta-support-agents=agent',
  ]);
  const scim = async (method: string, path: string, body?: object) => {
    const res = await request(`${stack.origin}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${idp.token}`,
        ...(body ? { 'content-type': 'application/scim+json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return {
      status: res.status,
      type: String(res.headers['content-type']),
      json: res.text ? (JSON.parse(res.text) as Json) : null,
    };
  };

  let res = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "grace@example.com"')}`);
  t.equal(res.status, 200);
  t.match(res.type, /application\/scim\+json/);
  t.equal(res.json.totalResults, 0, 'Okta looks the user up first');
  res = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'grace@example.com',
    name: { givenName: 'Grace', familyName: 'Hopper' },
    emails: [{ primary: true, value: 'grace@example.com', type: 'work' }],
    active: true,
    externalId: '00u-grace',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Support' },
  });
  t.equal(res.status, 201, JSON.stringify(res.json));
  const userId = res.json.id as string;
  res = await scim('PATCH', `/Users/${userId}`, {
    schemas: [PATCH_OP],
    Operations: [
      {
        op: 'replace',
        value: { name: { givenName: 'Grace', familyName: 'Hopper' }, displayName: 'Rear Admiral Hopper' },
      },
    ],
  });
  t.equal(res.status, 200);
  res = await scim('POST', '/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
    displayName: 'Support Agents',
    externalId: 'okta-support-agents',
    members: [],
  });
  t.equal(res.status, 201);
  const groupId = res.json.id as string;
  res = await scim('PATCH', `/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: 'members', value: [{ value: userId, display: 'grace@example.com' }] }],
  });
  t.equal(res.status, 200);
  res = await scim('PATCH', `/Users/${userId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { active: false } }],
  });
  t.equal(res.status, 200);
  t.equal(res.json.active, false);

  const user = expectOk(t, await admin.api.get(`/v1/users/${userId}`), 200, 'the provisioned user');
  t.match(user, {
    email: 'grace@example.com',
    name: 'Rear Admiral Hopper',
    role: 'agent',
    status: 'inactive',
    identityProvider: 'okta',
    externalId: '00u-grace',
    metadata: { department: 'Support' },
    groups: [{ id: groupId, name: 'Support Agents' }],
  });
  t.ok(user?.deactivatedAt, 'deactivatedAt set');
  const group = expectOk(t, await admin.api.get(`/v1/groups/${groupId}`), 200, 'the pushed group');
  t.match(group, { name: 'Support Agents', memberCount: 1, identityProvider: 'okta' });
  expectError(
    t,
    await admin.api.patch(`/v1/users/${userId}`, { name: 'Someone' }),
    409,
    'CONFLICT',
    'provider-owned name',
  );

  const types = ['user.created', 'user.updated', 'user.role_changed', 'user.deactivated'];
  const events: Json[] = await eventually(async () => {
    const list = (await admin.api.get(`/v1/events?resourceId=${userId}&limit=100`)).json?.data?.events ?? [];
    return types.every((type) => list.some((e: Json) => e.type === type)) ? list : null;
  });
  for (const type of types) {
    const summary = events.find((e) => e.type === type);
    const detail = expectOk(
      t,
      await admin.api.get(`/v1/events/${summary.id}`),
      200,
      `${type} in the audit log`,
    );
    t.equal(detail?.metadata?.source, 'scim', `${type}: source scim`);
    t.equal(detail?.actor?.id, 'idp:okta', `${type}: the connection is the actor`);
  }
  const groupEvents = (await admin.api.get(`/v1/events?resourceId=${groupId}`)).json?.data?.events ?? [];
  t.ok(
    groupEvents.some((e: Json) => e.type === 'system.config_changed'),
    'the group push is audited',
  );

  res = await scim('GET', '/Users', undefined);
  t.equal(res.status, 200);
  const refused = await request(`${stack.origin}/scim/v2/Users`, {
    headers: { authorization: 'Bearer sdscim_okta_nope' },
  });
  t.equal(refused.status, 401, 'a wrong token');
});
