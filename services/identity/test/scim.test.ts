import { metricValue } from '@support-desk/platform/testing';
import t from 'tap';
import { createIdentityProvider, findIdentityProvider } from '../src/use-cases/identity-providers.js';
import { cliContext } from '../src/use-cases/deps.js';
import { body, harness } from './helpers.js';

const SCIM = 'application/scim+json';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

t.test('SCIM 2.0 service provider', async (t) => {
  const h = await harness(t);
  const { token } = (await createIdentityProvider(h.deps, cliContext(), {
    name: 'okta',
    kind: 'scim',
    defaultRole: 'viewer',
    groupRoles: [{ group: 'okta-support-agents', role: 'agent' }],
  })) as { token: string };
  const other = (await createIdentityProvider(h.deps, cliContext(), { name: 'entra', kind: 'scim' })) as {
    token: string;
  };
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    bearer = token,
  ) =>
    h.app.inject({
      method,
      url: `/scim/v2${url}`,
      headers: { authorization: `Bearer ${bearer}`, ...(payload ? { 'content-type': SCIM } : {}) },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });

  await t.test('a connection made without roles provisions viewers', async (t) => {
    t.equal((await findIdentityProvider(h.deps, 'entra')).defaultRole, 'viewer');
  });

  await t.test('authentication and discovery', async (t) => {
    let res = await h.app.inject({ method: 'GET', url: '/scim/v2/Users' });
    t.equal(res.statusCode, 401);
    t.match(res.headers['content-type'], /application\/scim\+json/);
    t.match(body(res), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' });
    t.match(res.headers['www-authenticate'], /Bearer/);
    res = await call('GET', '/Users', undefined, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
    t.equal(res.statusCode, 401, 'a wrong secret');
    // Authenticated before the body is parsed: a caller without the token cannot make identity
    // parse anything (a malformed body from it is a 401, not a 400 about its JSON).
    for (const bearer of ['', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`]) {
      res = await h.app.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        headers: { 'content-type': SCIM, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
        payload: `{"userName": "${'x'.repeat(500_000)}`,
      });
      t.equal(res.statusCode, 401, `${bearer ? 'a wrong' : 'no'} token: 401 before the body is parsed`);
    }
    res = await call('GET', '/ServiceProviderConfig');
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-sd-authenticated-scim'], 'okta', 'tells the gateway which connection to count');
    t.match(body(res), { patch: { supported: true }, filter: { supported: true, maxResults: 200 } });
    res = await call('GET', '/ResourceTypes');
    t.same(
      body(res).Resources.map((r: { id: string }) => r.id),
      ['User', 'Group'],
    );
    res = await call('GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:User');
    t.equal(body(res).name, 'User');
    res = await call('GET', '/Nope');
    t.equal(res.statusCode, 404);
    t.equal(body(res).status, '404');
  });

  let userId = '';
  await t.test('Okta-style: look up, create, read, filter', async (t) => {
    let res = await call('GET', '/Users?filter=userName%20eq%20%22ada%40example.com%22&startIndex=1&count=2');
    t.match(body(res), { totalResults: 0, Resources: [] });
    res = await call('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'ada@example.com',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ primary: true, value: 'ada@example.com', type: 'work' }],
      displayName: 'Ada Lovelace',
      active: true,
      externalId: '00u1',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Support' },
    });
    t.equal(res.statusCode, 201, res.body);
    t.match(res.headers['content-type'], /application\/scim\+json/);
    const created = body(res);
    userId = created.id;
    t.match(created.meta?.location, new RegExp(`^https?://.+/scim/v2/Users/${userId}$`), 'meta.location');
    t.equal(res.headers.location, created.meta?.location, 'RFC 7644 §3.3: Location is meta.location');
    t.match(created, {
      userName: 'ada@example.com',
      displayName: 'Ada Lovelace',
      active: true,
      externalId: '00u1',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      meta: { resourceType: 'User', location: `http://127.0.0.1:8080/scim/v2/Users/${userId}` },
    });
    const ev = await h.waitForEvent((e) => e.type === 'user.created' && e.resourceId === userId);
    t.equal(ev.metadata.source, 'scim');
    res = await h.app.inject({
      method: 'GET',
      url: `/v1/users/${userId}`,
      headers: await h.headers('admin'),
    });
    t.match(body(res).data, {
      identityProvider: 'okta',
      role: 'viewer',
      metadata: { department: 'Support', givenName: 'Ada', familyName: 'Lovelace' },
    });

    res = await call('POST', '/Users', { userName: 'ADA@example.com', name: { formatted: 'Dup' } });
    t.equal(res.statusCode, 409);
    t.equal(body(res).scimType, 'uniqueness');
    for (const filter of [
      'userName eq "ADA@example.com"',
      'externalId eq "00u1"',
      'displayName eq "Ada Lovelace"',
    ]) {
      res = await call('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      t.equal(body(res).totalResults, 1, filter);
    }
    res = await call('GET', `/Users?filter=${encodeURIComponent('userName sw "ada" and active eq true')}`);
    t.equal(
      body(res).totalResults,
      1,
      'without a look-up equality: the connection scanned, the filter evaluated',
    );
    res = await call('GET', `/Users?filter=${encodeURIComponent('userName eq')}`);
    t.equal(res.statusCode, 400);
    t.equal(body(res).scimType, 'invalidFilter');
    res = await call('GET', '/Users', undefined, other.token);
    t.equal(body(res).totalResults, 0, 'another connection sees none of them');
    res = await call('GET', `/Users/${userId}`, undefined, other.token);
    t.equal(res.statusCode, 404);
  });

  await t.test('updates: PATCH as Okta and Entra send them, PUT, deactivation', async (t) => {
    let res = await call('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'replace', value: { name: { givenName: 'Ada', familyName: 'King' }, displayName: 'Ada King' } },
      ],
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(body(res).displayName, 'Ada King');
    res = await call('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [
        {
          op: 'Replace',
          path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
          value: 'Ops',
        },
        { op: 'Replace', path: 'title', value: 'Lead' },
      ],
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res), {
      title: 'Lead',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Ops' },
    });
    res = await call('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    t.equal(body(res).active, false, 'Entra sends booleans as strings');
    const off = await h.waitForEvent((e) => e.type === 'user.deactivated' && e.resourceId === userId);
    t.equal(off.metadata.source, 'scim');
    res = await call('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: 'active' }],
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(body(res).active, false, 'removing active never reactivates a leaver');
    res = await call('PUT', `/Users/${userId}`, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'ada.king@example.com',
      name: { formatted: 'Ada King' },
      active: true,
      externalId: '00u1',
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res), { userName: 'ada.king@example.com', active: true });
    t.notOk(body(res).title, 'PUT replaces: what was not sent is gone');
    res = await call('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'explode', path: 'x' }],
    });
    t.equal(res.statusCode, 400);
    res = await call('PUT', `/Users/${userId}`, { userName: 'not-an-email' });
    t.equal(res.statusCode, 400);
    t.equal(body(res).scimType, 'invalidValue');
  });

  await t.test('PATCH paths: each one applied, or a SCIM 400 that changes nothing', async (t) => {
    let res = await call('POST', '/Users', {
      userName: 'grace@example.com',
      name: { givenName: 'Grace', familyName: 'Hopper' },
      emails: [{ value: 'grace@example.com', type: 'work', primary: true }],
      externalId: 'entra-grace',
    });
    t.equal(res.statusCode, 201, res.body);
    const id = body(res).id;
    const patch = (...Operations: object[]) =>
      call('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations });

    res = await patch({
      op: 'Replace',
      path: 'emails[type eq "work"].value',
      value: 'grace.hopper@example.com',
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res), {
      userName: 'grace.hopper@example.com',
      emails: [{ value: 'grace.hopper@example.com', type: 'work', primary: true }],
    });
    res = await h.app.inject({ method: 'GET', url: `/v1/users/${id}`, headers: await h.headers('admin') });
    t.equal(body(res).data.email, 'grace.hopper@example.com', "Entra's work email is the user's email");

    res = await patch({ op: 'replace', path: 'DisplayName', value: 'Amazing Grace' });
    t.equal(body(res).displayName, 'Amazing Grace', 'attribute names in paths are case-insensitive');
    res = await patch({ op: 'replace', path: 'Name.GivenName', value: 'Gracie' });
    t.equal(body(res).name?.givenName, 'Gracie', 'sub-attribute names too');
    res = await patch({ op: 'replace', path: 'EMAILS[TYPE eq "work"].VALUE', value: 'grace@example.com' });
    t.equal(body(res).userName, 'grace@example.com', 'and value filters');
    res = await patch({ op: 'replace', value: { DisplayName: 'Grace H.', 'name.familyName': 'H.' } });
    t.match(body(res), { displayName: 'Grace H.', name: { familyName: 'H.' } }, 'and the keys of a value');

    const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
    res = await patch({ op: 'add', path: ENTERPRISE, value: { schemas: [ENTERPRISE], Department: 'Ops' } });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res)[ENTERPRISE], { department: 'Ops' }, 'a whole extension, its schemas key aside');
    res = await patch({
      op: 'replace',
      value: { [ENTERPRISE]: { schemas: [ENTERPRISE], costCenter: 'CC1' } },
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res)[ENTERPRISE], { costCenter: 'CC1' }, 'also as a key of a path-less value');

    const before = body(await call('GET', `/Users/${id}`));
    const refused: [string, object[], string, RegExp][] = [
      [
        'an attribute the schema does not have',
        [{ op: 'replace', path: 'phoneNumbers[type eq "work"].value', value: '+1 555 0100' }],
        'invalidPath',
        /phoneNumbers/,
      ],
      [
        'a sub-attribute it does not have',
        [{ op: 'add', path: 'name.middleName', value: 'M' }],
        'invalidPath',
        /middleName/,
      ],
      [
        'a key of a value',
        [{ op: 'replace', value: { active: true, password: 'hunter2hunter2' } }],
        'invalidPath',
        /password/,
      ],
      [
        'a read-only attribute',
        [{ op: 'add', path: 'groups', value: [{ value: 'grp_x' }] }],
        'mutability',
        /groups/,
      ],
      ['the id', [{ op: 'replace', path: 'id', value: 'usr_x' }], 'mutability', /id/],
      [
        'a second email (a user has one)',
        [{ op: 'add', path: 'emails[type eq "home"].value', value: 'grace@home.example' }],
        'mutability',
        /email/,
      ],
      [
        'userName and the work email set apart',
        [
          { op: 'replace', path: 'userName', value: 'g1@example.com' },
          { op: 'replace', path: 'emails[type eq "work"].value', value: 'g2@example.com' },
        ],
        'mutability',
        /emails/,
      ],
      [
        'a malformed value filter',
        [{ op: 'replace', path: 'emails[type eq].value', value: 'x@example.com' }],
        'invalidPath',
        /emails/,
      ],
    ];
    for (const [what, ops, scimType, detail] of refused) {
      res = await patch(...ops, { op: 'replace', path: 'displayName', value: 'Changed Anyway' });
      t.equal(res.statusCode, 400, `${what}: 400`);
      t.equal(body(res).scimType, scimType, `${what}: ${scimType}`);
      t.match(body(res).detail, detail, `${what}: the detail names it (${body(res).detail})`);
    }
    t.same(
      body(await call('GET', `/Users/${id}`)),
      before,
      'a refused PATCH changed nothing, not even its other operations',
    );

    const group = body(await call('POST', '/Groups', { displayName: 'Patch Paths' })).id;
    res = await call('PATCH', `/Groups/${group}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'description', value: 'x' }],
    });
    t.equal(res.statusCode, 400, 'a group attribute the schema does not have');
    t.equal(body(res).scimType, 'invalidPath');
    res = await call('PATCH', `/Groups/${group}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'DisplayName', value: 'Patch Paths EU' }],
    });
    t.equal(body(res).displayName, 'Patch Paths EU');
  });

  await t.test(
    'PATCH keys the schemas do not define never reach the patcher (prototype pollution)',
    async (t) => {
      const user = body(
        await call('POST', '/Users', {
          userName: 'proto@example.com',
          emails: [{ value: 'proto@example.com', type: 'work', primary: true }],
          displayName: 'Proto',
        }),
      ).id;
      const group = body(
        await call('POST', '/Groups', { displayName: 'Proto Group', members: [{ value: user }] }),
      ).id;
      const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
      // JSON.parse makes `__proto__` an own key, as a request body does.
      const own = (json: string) => JSON.parse(json) as object;
      const vectors: [string, object][] = [
        ['Users', { op: 'add', path: '__proto__.polluted', value: 'yes' }],
        ['Users', { op: 'add', path: 'constructor.prototype.polluted', value: 'yes' }],
        ['Users', { op: 'add', path: 'toString.polluted', value: 'yes' }],
        ['Users', { op: 'add', value: { '__proto__.polluted': 'yes' } }],
        ['Users', { op: 'add', value: own('{"__proto__": {"polluted": "yes"}}') }],
        ['Users', { op: 'add', value: { 'constructor.prototype.polluted': 'yes' } }],
        [
          'Users',
          {
            op: 'add',
            path: 'emails',
            value: [own('{"value": "p2@example.com", "__proto__": {"polluted": "yes"}}')],
          },
        ],
        ['Users', { op: 'replace', path: 'emails[type eq "work"]', value: { '__proto__.polluted': 'yes' } }],
        [
          'Users',
          {
            op: 'replace',
            path: 'emails[type eq "work"]',
            value: { 'constructor.prototype.polluted': 'yes' },
          },
        ],
        ['Users', { op: 'replace', path: 'emails[type eq "work"]', value: { 'toString.polluted': 'yes' } }],
        [
          'Users',
          {
            op: 'add',
            value: { emails: [{ value: 'p3@example.com', 'constructor.prototype.polluted': 'yes' }] },
          },
        ],
        ['Users', { op: 'add', path: 'name', value: own('{"__proto__": {"polluted": "yes"}}') }],
        ['Users', { op: 'add', path: ENTERPRISE, value: own('{"__proto__": {"polluted": "yes"}}') }],
        [
          'Users',
          { op: 'add', path: `${ENTERPRISE}:constructor`, value: { prototype: { polluted: 'yes' } } },
        ],
        [
          'Groups',
          { op: 'add', path: 'members', value: [{ value: user, 'constructor.prototype.polluted': 'yes' }] },
        ],
        [
          'Groups',
          { op: 'replace', path: `members[value eq "${user}"]`, value: { '__proto__.polluted': 'yes' } },
        ],
        [
          'Groups',
          {
            op: 'replace',
            path: `members[value eq "${user}"]`,
            value: { 'constructor.prototype.polluted': 'yes' },
          },
        ],
        [
          'Groups',
          { op: 'add', value: own(`{"members": [{"value": "${user}", "__proto__": {"polluted": "yes"}}]}`) },
        ],
      ];
      for (const [resource, op] of vectors) {
        const res = await call('PATCH', `/${resource}/${resource === 'Users' ? user : group}`, {
          schemas: [PATCH_OP],
          Operations: [op],
        });
        const what = JSON.stringify(op);
        t.equal(res.statusCode, 400, `${what}: 400`);
        // A JSON key __proto__ is refused by the parser (invalidSyntax), any other by the schema.
        t.match(body(res).scimType, /^(invalidPath|invalidSyntax)$/, `${what}: ${body(res).detail}`);
        t.match(body(res).detail, /__proto__|constructor|toString/, `${what}: the detail names the key`);
        t.equal(({} as Record<string, unknown>).polluted, undefined, `${what}: Object.prototype untouched`);
        t.equal(
          (Object.prototype.toString as unknown as Record<string, unknown>).polluted,
          undefined,
          `${what}: Object.prototype.toString untouched`,
        );
      }
      const res = await call('PATCH', `/Users/${user}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'add', path: 'emails', value: [{ value: 'proto@example.com', type: 'work', display: 'W' }] },
        ],
      });
      t.equal(
        res.statusCode,
        200,
        `RFC 7643 §2.4's default sub-attributes (display) are still accepted: ${res.body}`,
      );
    },
  );

  await t.test(
    'an invalid filter: 400 invalidFilter saying what is wrong and where, no parser internals',
    async (t) => {
      const cases: [string, RegExp][] = [
        ['userName eq', /value.*after "eq".*position 12|position 12.*value/],
        ['userName eq "ada', /unterminated|closing quote/i],
        ['userName xx "ada"', /"xx".*position 10/],
        ['(userName eq "ada"', /"\)"/],
        ['userName eq "ada" and', /after "and"/],
        ['emails[type eq "work"', /"\]"/],
        ['userName eq "ada" )', /unexpected "\)" at position 19/],
        ['userName pr extra', /"extra" at position 13/],
      ];
      for (const [filter, detail] of cases) {
        const res = await call('GET', `/Users?filter=${encodeURIComponent(filter)}`);
        t.equal(res.statusCode, 400, filter);
        const b = body(res);
        t.equal(b.scimType, 'invalidFilter', filter);
        t.match(b.detail, detail, `${filter}: ${b.detail}`);
        t.notMatch(b.detail, /EOT|is not json|Unexpected token|\[\(/, `${filter}: no parser internals`);
      }
    },
  );

  await t.test('every SCIM call is counted by resource and outcome (the sync-failure alert)', async (t) => {
    const counted = (resource: string, outcome: string) =>
      metricValue('identity_scim_requests_total', { resource, outcome });
    const before = {
      usersOk: await counted('users', 'ok'),
      usersUnauthorized: await counted('users', 'unauthorized'),
      usersRefused: await counted('users', 'refused'),
      groupsOk: await counted('groups', 'ok'),
      otherOk: await counted('other', 'ok'),
    };
    t.equal((await call('GET', '/Users')).statusCode, 200);
    t.equal((await call('GET', '/Users', undefined, 'sdscim_okta_wrong')).statusCode, 401);
    t.equal((await call('POST', '/Users', { schemas: [], userName: '' })).statusCode, 400);
    t.equal((await call('GET', '/Groups')).statusCode, 200);
    t.equal((await call('GET', '/ServiceProviderConfig')).statusCode, 200);
    t.equal(await counted('users', 'ok'), before.usersOk + 1);
    t.equal(await counted('users', 'unauthorized'), before.usersUnauthorized + 1, 'a revoked or wrong token');
    t.equal(await counted('users', 'refused'), before.usersRefused + 1, 'a change refused');
    t.equal(await counted('groups', 'ok'), before.groupsOk + 1);
    t.equal(await counted('other', 'ok'), before.otherOk + 1, 'discovery');
  });

  await t.test('groups: push, members add/remove, the group → role rule, delete', async (t) => {
    let res = await call('POST', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Support Agents',
      externalId: 'okta-support-agents',
      members: [{ value: userId }],
    });
    t.equal(res.statusCode, 201, res.body);
    const groupId = body(res).id;
    t.equal(res.headers.location, body(res).meta?.location, 'Location is meta.location');
    t.match(res.headers.location, new RegExp(`/scim/v2/Groups/${groupId}$`));
    t.same(
      body(res).members.map((m: { value: string }) => m.value),
      [userId],
    );
    const role = await h.waitForEvent((e) => e.type === 'user.role_changed' && e.resourceId === userId);
    t.same(role.changes?.role, { from: 'viewer', to: 'agent' });
    res = await call('GET', `/Users/${userId}`);
    t.same(
      body(res).groups.map((g: { value: string }) => g.value),
      [groupId],
    );
    res = await call(
      'GET',
      `/Groups?filter=${encodeURIComponent('displayName eq "support agents"')}&excludedAttributes=members`,
    );
    t.equal(body(res).totalResults, 1);
    t.notOk('members' in body(res).Resources[0], 'excludedAttributes=members');

    res = await call('PATCH', `/Groups/${groupId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${userId}"]` }],
    });
    t.equal(res.statusCode, 200, res.body);
    t.same(body(res).members ?? [], []);
    res = await call('PATCH', `/Groups/${groupId}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'add', path: 'members', value: [{ value: userId }] },
        { op: 'replace', path: 'displayName', value: 'Support Agents EU' },
      ],
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(body(res), { displayName: 'Support Agents EU', members: [{ value: userId }] });
    res = await call('PATCH', `/Groups/${groupId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: 'usr_00000000000000000000000000' }] }],
    });
    t.equal(res.statusCode, 400, 'a member must be a user of the connection');
    res = await call('DELETE', `/Groups/${groupId}`);
    t.equal(res.statusCode, 204);
    res = await call('GET', `/Groups/${groupId}`);
    t.equal(res.statusCode, 404);
    res = await call('DELETE', `/Users/${userId}`);
    t.equal(res.statusCode, 204);
    res = await call('GET', `/Users/${userId}`);
    t.equal(body(res).active, false, 'users are deactivated, never removed');
  });
});
