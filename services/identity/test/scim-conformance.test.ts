// What the SCIM conformance checker (scim2-tester, test/e2e/test/scim-conformance.test.ts) found,
// each pinned here on the service alone: 405 for a method an endpoint does not serve, 501 for a
// search by POST, a PATCH whose path is the enterprise extension's URN, externalId removed by
// PATCH and changed on a group, name.formatted kept as sent, group members as RFC 7643 §8.7.1
// describes them.
import t from 'tap';
import { createIdentityProvider } from '../src/use-cases/identity-providers.js';
import { cliContext } from '../src/use-cases/deps.js';
import { body, harness } from './helpers.js';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

t.test('SCIM conformance', async (t) => {
  const h = await harness(t);
  const { token } = (await createIdentityProvider(h.deps, cliContext(), { name: 'okta', kind: 'scim' })) as {
    token: string;
  };
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    h.app.inject({
      method,
      url: `/scim/v2${url}`,
      headers: {
        authorization: `Bearer ${token}`,
        ...(payload ? { 'content-type': 'application/json' } : {}),
      },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
  const patch = (url: string, ...Operations: object[]) =>
    call('PATCH', url, { schemas: [PATCH_OP], Operations });

  await t.test('405 for a method an endpoint does not serve, 501 for a search by POST', async (t) => {
    for (const [method, url, allow] of [
      ['POST', '/ServiceProviderConfig', 'GET'],
      ['DELETE', '/Schemas', 'GET'],
      ['PUT', `/ResourceTypes/User`, 'GET'],
      ['DELETE', '/Users', 'GET, POST'],
      ['POST', '/Groups/grp_x', 'GET, PUT, PATCH, DELETE'],
    ] as const) {
      const res = await call(method, url, method === 'DELETE' ? undefined : {});
      t.equal(res.statusCode, 405, `${method} ${url}`);
      t.equal(res.headers.allow, allow);
      t.match(body(res), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '405' });
    }
    for (const url of ['/.search', '/Users/.search']) {
      const res = await call('POST', url, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      });
      t.equal(res.statusCode, 501, url);
      t.equal(body(res).status, '501');
    }
  });

  await t.test('users: the whole enterprise extension, externalId removed, name.formatted', async (t) => {
    let res = await call('POST', '/Users', {
      userName: 'lin@example.com',
      externalId: 'ext-lin',
      name: { formatted: 'Ms. Lin Wei', givenName: 'Lin', familyName: 'Wei' },
      displayName: 'Lin',
      [ENTERPRISE]: { department: 'Support' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = body(res).id as string;
    t.match(body(res), { displayName: 'Lin', name: { formatted: 'Ms. Lin Wei', givenName: 'Lin' } });

    res = await patch(`/Users/${id}`, {
      op: 'add',
      path: ENTERPRISE,
      value: { costCenter: 'CC1', division: 'EU' },
    });
    t.equal(res.statusCode, 200, res.body);
    t.same(body(res)[ENTERPRISE], { costCenter: 'CC1', division: 'EU', department: 'Support' }, 'add merges');
    res = await patch(`/Users/${id}`, { op: 'replace', path: ENTERPRISE, value: { organization: 'Acme' } });
    t.same(body(res)[ENTERPRISE], { organization: 'Acme' }, 'replace sets the whole extension');
    res = await patch(`/Users/${id}`, { op: 'remove', path: ENTERPRISE });
    t.notOk(body(res)[ENTERPRISE], 'remove deletes it');
    t.same(body(res).schemas, ['urn:ietf:params:scim:schemas:core:2.0:User']);

    res = await patch(`/Users/${id}`, { op: 'remove', path: 'externalId' });
    t.equal(res.statusCode, 200, res.body);
    t.notOk('externalId' in body(res), 'externalId removed');
    res = await call('GET', `/Users?filter=${encodeURIComponent('externalId eq "ext-lin"')}`);
    t.equal(body(res).totalResults, 0, 'and released');
    res = await patch(`/Users/${id}`, { op: 'remove', path: 'name' });
    t.notOk('name' in body(res), 'name removed');
    t.equal(body(res).displayName, 'Lin');
  });

  await t.test('groups: externalId added, replaced, removed; members without display', async (t) => {
    let res = await call('POST', '/Users', { userName: 'max@example.com', displayName: 'Max' });
    const userId = body(res).id as string;
    res = await call('POST', '/Groups', { displayName: 'Tier 2', members: [{ value: userId }] });
    t.equal(res.statusCode, 201, res.body);
    const id = body(res).id as string;
    t.same(body(res).members, [
      { value: userId, $ref: `http://127.0.0.1:8080/scim/v2/Users/${userId}`, type: 'User' },
    ]);
    res = await patch(`/Groups/${id}`, { op: 'add', path: 'externalId', value: 'g-1' });
    t.equal(body(res).externalId, 'g-1', res.body);
    res = await patch(`/Groups/${id}`, { op: 'replace', path: 'externalId', value: 'g-2' });
    t.equal(body(res).externalId, 'g-2');
    res = await call('GET', `/Groups?filter=${encodeURIComponent('externalId eq "g-2"')}`);
    t.equal(body(res).totalResults, 1, 'found by the new externalId');
    res = await call('GET', `/Groups?filter=${encodeURIComponent('externalId eq "g-1"')}`);
    t.equal(body(res).totalResults, 0, 'the old one released');
    res = await patch(`/Groups/${id}`, { op: 'remove', path: 'externalId' });
    t.notOk('externalId' in body(res), 'removed');
    res = await call('PUT', `/Groups/${id}`, { displayName: 'Tier 2', externalId: 'g-3', members: [] });
    t.match(body(res), { externalId: 'g-3' }, 'PUT sets it');
  });
});
