// The LDAP directory sync on the whole stack: a real slapd, identity's scheduled sync and
// `deskctl idp sync`, then the users and the audit log as a client sees them through the gateway.
import { generatePeople, startPrivateSlapd } from '@support-desk/platform/testing';
import t from 'tap';
import { cast } from '../src/actors.js';
import type { Json } from '../src/http.js';
import { eventually, startStack } from '../src/stack.js';

const slapd = await startPrivateSlapd(t, {
  people: generatePeople(6, 'corp.example.test'),
  groups: [{ cn: 'Desk Admins', members: ['user1'] }],
});
const PASSWORD_VAR = 'LDAP_BIND_PASSWORD_E2E';
// The bind password is a secret of identity's environment (and deskctl's), named by the connection.
const stack = await startStack(t, {
  env: { [PASSWORD_VAR]: slapd.reader.password, IDENTITY_LDAP_SYNC_TICK_MS: '500' },
});
const { admin } = await cast(stack);

const syncEvents = async (): Promise<Json[]> => {
  const res = await admin.api.get('/v1/events?type=system.sync_completed&limit=100');
  // Polled: no assertion here (their count would vary); a failing list never shows the event.
  if (res.status !== 200) return [];
  return (res.json as Json).data.events.filter((e: Json) => e.resourceId === 'idp:corp');
};

const corpUser = async (email: string): Promise<Json> => {
  const list = await admin.api.get(`/v1/users?search=${encodeURIComponent(email)}`);
  const id = (list.json as Json).data.users[0]?.id;
  if (!id) return undefined;
  return ((await admin.api.get(`/v1/users/${id}`)).json as Json).data;
};

t.test('a scheduled sync brings the directory in; the audit log has its system.sync_completed', async (t) => {
  const created = await stack.deskctlJson([
    'idp',
    'create',
    'corp',
    '--kind',
    'ldap',
    '--default-role',
    'agent',
    '--group-role',
    `${slapd.groupDn('Desk Admins')}=admin`,
    '--url',
    slapd.url,
    '--bind-dn',
    slapd.reader.dn,
    '--password-env',
    PASSWORD_VAR,
    '--base-dn',
    slapd.suffix,
    '--metadata',
    'department=departmentNumber',
    '--interval',
    '15m',
  ]);
  t.equal(created.kind, 'ldap');
  // No run yet: the service's scheduler finds the connection due and syncs it by itself.
  const [event] = await eventually(
    async () => ((await syncEvents()).length > 0 ? await syncEvents() : undefined),
    {
      what: 'the scheduled sync',
      timeoutMs: 30_000,
    },
  );
  t.match(event, {
    type: 'system.sync_completed',
    resourceType: 'system',
    resourceId: 'idp:corp',
    actor: { id: 'idp:corp' },
  });
  const detail = ((await admin.api.get(`/v1/events/${event.id}`)).json as Json).data;
  t.match(detail.changes, {
    provider: { from: null, to: 'corp' },
    trigger: { to: 'schedule' },
    outcome: { to: 'succeeded' },
    usersCreated: { to: 6 },
    usersDeactivated: { to: 0 },
    groupsChanged: { to: 1 },
  });
  t.type(detail.changes.durationMs.to, 'number');
  t.match(detail.metadata, { source: 'ldap' });

  const user1 = await corpUser('user1@corp.example.test');
  t.match(user1, {
    identityProvider: 'corp',
    role: 'admin',
    status: 'active',
    metadata: { department: 'd1' },
  });
  t.same(
    user1.groups.map((g: Json) => g.name),
    ['Desk Admins'],
  );
  t.match(await corpUser('user2@corp.example.test'), { identityProvider: 'corp', role: 'agent' });
  const patched = await admin.api.patch(`/v1/users/${user1.id}`, { name: 'Changed here' });
  t.equal(patched.status, 409, 'the directory owns the name: /v1 answers 409');
});

t.test('deskctl idp sync: a leaver is deactivated, with its events in the audit log', async (t) => {
  await slapd.removePerson('user6');
  const res = await stack.deskctl(['idp', 'sync', 'corp']);
  t.equal(res.code, 0, res.stderr);
  t.match(res.json, { provider: 'corp', trigger: 'cli', outcome: 'succeeded', usersDeactivated: 1 });
  const leaver = await corpUser('user6@corp.example.test');
  t.match(leaver, { status: 'inactive', identityProvider: 'corp' });
  await eventually(async () => {
    const res = await admin.api.get(`/v1/events?type=user.deactivated&limit=100`);
    return (res.json as Json).data.events.find((e: Json) => e.resourceId === leaver.id);
  });
  const events = await eventually(async () => {
    const all = await syncEvents();
    return all.length >= 2 ? all : undefined;
  });
  t.equal(events.length, 2, 'one event per run');
  const newest = ((await admin.api.get(`/v1/events/${events[0].id}`)).json as Json).data;
  t.match(newest.changes, { trigger: { to: 'cli' }, usersDeactivated: { to: 1 }, usersCreated: { to: 0 } });
});
