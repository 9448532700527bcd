import t from 'tap';
import type { DirectoryUser } from '../src/use-cases/directory.js';
import { ldapSettings } from '../src/use-cases/ldap-settings.js';
import { type CurrentUser, planSync } from '../src/use-cases/ldap-sync-plan.js';

const dirUser = (n: number, over: Partial<DirectoryUser> = {}): DirectoryUser => ({
  externalId: `e${n}`,
  dn: `uid=u${n},ou=people,dc=x`,
  email: `u${n}@x.test`,
  name: `User ${n}`,
  active: true,
  metadata: {},
  groups: [],
  ...over,
});

const current = (n: number, over: Partial<CurrentUser> = {}): CurrentUser => ({
  id: `usr_${n}`,
  externalId: `e${n}`,
  email: `u${n}@x.test`,
  name: `User ${n}`,
  active: true,
  metadata: {},
  groups: [],
  ...over,
});

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const limits = { maxDeactivatePercent: 20 };

t.test('planSync: creates, updates, deactivations, memberships', async (t) => {
  const snapshot = {
    users: [
      dirUser(1),
      dirUser(2, { name: 'Renamed' }),
      dirUser(3, { groups: ['g1'] }),
      dirUser(4, { active: false }),
      dirUser(6),
      dirUser(7, { metadata: { department: 'd1' } }),
    ],
    groups: [
      { externalId: 'g1', dn: 'cn=g1', name: 'Group 1' },
      { externalId: 'g2', dn: 'cn=g2', name: 'Group 2 renamed' },
    ],
    skipped: [],
  };
  const now = {
    users: [
      ...[1, 2, 3, 4, 5, 7, 8, 9, 10].map((n) => current(n)),
      current(11, { active: false }),
      current(12, { externalId: 'e12', active: false }),
    ],
    groups: [
      { id: 'grp_2', externalId: 'g2', name: 'Group 2' },
      { id: 'grp_3', externalId: 'g3', name: 'Gone' },
    ],
  };
  // 9 active now; deactivations: 4 (disabled), 5, 8, 9, 10 (gone) = 5 > 20 % of 9.
  t.match(planSync(snapshot, now, limits), { ok: false, reason: /5 of 9 active users/ });
  const outcome = planSync(snapshot, now, { maxDeactivatePercent: 60 });
  t.ok(outcome.ok);
  if (!outcome.ok) return;
  const { plan } = outcome;
  t.same(
    plan.users.create.map((u) => u.externalId),
    ['e6'],
  );
  t.same(plan.users.update.map((u) => u.id).sort(), ['usr_2', 'usr_7']);
  t.same(plan.users.deactivate.map((u) => u.id).sort(), ['usr_10', 'usr_4', 'usr_5', 'usr_8', 'usr_9']);
  t.same(plan.memberships, [{ externalId: 'e3', groups: ['g1'] }]);
  t.same(
    plan.groups.create.map((g) => g.externalId),
    ['g1'],
  );
  t.same(plan.groups.rename, [{ id: 'grp_2', name: 'Group 2 renamed' }]);
  t.same(
    plan.groups.remove.map((g) => g.id),
    ['grp_3'],
  );
});

t.test('planSync: a deactivated user listed again is reactivated', async (t) => {
  const outcome = planSync(
    { users: [dirUser(1), dirUser(2)], groups: [], skipped: [] },
    { users: [current(1), current(2, { active: false })], groups: [] },
    limits,
  );
  t.match(outcome, { ok: true, plan: { users: { update: [{ id: 'usr_2', user: { active: true } }] } } });
});

t.test('planSync: the safety threshold', async (t) => {
  const ten = range(10).map((n) => current(n));
  t.match(
    planSync(
      { users: [], groups: [], skipped: [] },
      { users: ten, groups: [] },
      { maxDeactivatePercent: 100 },
    ),
    { ok: false, reason: /returned no users/ },
    'an empty answer stops even at 100 %',
  );
  const nine = range(9).map((n) => dirUser(n));
  t.match(planSync({ users: nine, groups: [], skipped: [] }, { users: ten, groups: [] }, limits), {
    ok: true,
  });
  const seven = range(7).map((n) => dirUser(n));
  t.match(planSync({ users: seven, groups: [], skipped: [] }, { users: ten, groups: [] }, limits), {
    ok: false,
    reason: '3 of 10 active users would be deactivated, more than the 20% allowed',
  });
  t.match(
    planSync({ users: [], groups: [], skipped: [] }, { users: [], groups: [] }, limits),
    { ok: true },
    'an empty directory and no users: nothing to do',
  );
});

t.test('planSync: duplicates and entries without id or mail are skipped, not guessed', async (t) => {
  const outcome = planSync(
    {
      users: [dirUser(1), dirUser(2, { externalId: 'e1' }), dirUser(3, { email: 'U1@x.test' })],
      groups: [],
      skipped: [{ dn: 'uid=nomail', reason: 'user without mail' }],
    },
    { users: [], groups: [] },
    limits,
  );
  t.match(outcome, {
    ok: true,
    plan: {
      users: { create: [{ externalId: 'e1' }] },
      skipped: [{ reason: 'user without mail' }, { reason: 'duplicate id' }, { reason: 'duplicate mail' }],
    },
  });
});

t.test('ldapSettings: defaults, and the field named on bad input', async (t) => {
  const policy = { secretsDir: '/run/secrets' };
  const s = ldapSettings(
    {
      url: 'ldap://127.0.0.1:389',
      bindDn: 'cn=sync,dc=x',
      passwordEnv: 'LDAP_BIND_PASSWORD',
      baseDn: 'dc=x',
    },
    policy,
  );
  t.match(s, {
    startTls: false,
    userFilter: '(objectClass=inetOrgPerson)',
    groupFilter: '(objectClass=groupOfNames)',
    attributes: { externalId: 'entryUUID', email: 'mail', name: 'cn', active: null, memberOf: 'memberOf' },
    intervalMinutes: 15,
    maxDeactivatePercent: 20,
  });
  const base = { url: 'ldaps://h', bindDn: 'cn=a', passwordEnv: 'LDAP_BIND_PASSWORD_CORP', baseDn: 'dc=x' };
  const bad: [object, RegExp][] = [
    [{ ...base, url: 'http://h' }, /ldap\.url/],
    [{ ...base, passwordEnv: undefined }, /ldap\.passwordEnv/],
    [{ ...base, passwordFile: '/run/secrets/ldap' }, /ldap\.passwordEnv/],
    [{ ...base, userFilter: 'objectClass=person' }, /ldap\.userFilter/],
    [{ ...base, groupFilter: '(cn=a' }, /ldap\.groupFilter/],
    [{ ...base, attributes: { email: 'mail;binary' } }, /ldap\.attributes\.email/],
    [{ ...base, maxDeactivatePercent: 101 }, /ldap\.maxDeactivatePercent/],
    [{ ...base, metadata: { 'a.b': 'title' } }, /ldap\.metadata/],
    // Issue 30: the password only from LDAP_BIND_PASSWORD… or LDAP_SECRETS_DIR, never in clear.
    [{ ...base, passwordEnv: 'OAUTH_SIGNING_KEYS' }, /ldap\.passwordEnv.*LDAP_BIND_PASSWORD/],
    [{ ...base, passwordEnv: 'MONGO_URL' }, /ldap\.passwordEnv/],
    [
      { ...base, passwordEnv: null, passwordFile: '/app/.data/identity/oauth-keys.json' },
      /ldap\.passwordFile/,
    ],
    [{ ...base, passwordEnv: null, passwordFile: '/run/secrets/../../etc/shadow' }, /ldap\.passwordFile/],
    [{ ...base, passwordEnv: null, passwordFile: 'ldap-password' }, /ldap\.passwordFile/],
    [{ ...base, passwordEnv: null, passwordFile: '/run/secrets' }, /ldap\.passwordFile/],
    [{ ...base, url: 'ldap://ldap.example.com:389' }, /ldap\.url.*in clear/],
    [{ ...base, url: 'ldap://10.0.0.5' }, /ldap\.url/],
    [{ ...base, startTls: true }, /ldap\.startTls/],
    [{ ...base, startTls: 'yes' }, /ldap\.startTls/],
    // Untrusted keys: never a prototype's name, never a field the sync does not map.
    [{ ...base, metadata: { constructor: 'title' } }, /ldap\.metadata/],
    [{ ...base, metadata: JSON.parse('{"__proto__": "title"}') }, /ldap\.metadata/],
    [{ ...base, metadata: { prototype: 'title' } }, /ldap\.metadata/],
    [{ ...base, attributes: { constructor: 'cn' } }, /ldap\.attributes/],
    [{ ...base, attributes: JSON.parse('{"__proto__": {"email": "userPassword"}}') }, /ldap\.attributes/],
    [{ ...base, attributes: { emial: 'mail' } }, /ldap\.attributes/],
  ];
  for (const [input, field] of bad)
    t.throws(() => ldapSettings(input, policy), { message: field }, JSON.stringify(input));
  t.equal(
    ldapSettings({ ...base, groupFilter: '' }, policy).groupFilter,
    '',
    'an empty group filter: no groups',
  );
  t.match(ldapSettings({ ...base, url: 'ldap://ldap.example.com', startTls: true }, policy), {
    startTls: true,
  });
  t.ok(ldapSettings({ ...base, url: 'ldap://[::1]:389' }, policy), 'ldap:// to loopback');
  t.ok(ldapSettings({ ...base, url: 'ldap://localhost' }, policy));
  t.match(ldapSettings({ ...base, passwordEnv: null, passwordFile: '/run/secrets/ldap/corp' }, policy), {
    passwordFile: '/run/secrets/ldap/corp',
  });
  t.equal(({} as Record<string, unknown>).email, undefined, 'Object.prototype untouched');
});
