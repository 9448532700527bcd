import t, { type Test } from 'tap';
import {
  burstPastLimit,
  checkBurst,
  checkIndexedPlans,
  checkListDeadline,
  commandsOf,
  declaredIndexes,
  listQueriesOf,
  uncovered,
} from '@support-desk/platform/testing';
import { walkBounds } from '@support-desk/platform/store';
import { dayKey } from '@support-desk/platform/core';
import { userListKeys } from '../src/store/user-keys.js';
import { UserSchema, userModel } from '../src/store/users.js';
import { createIdentityProvider } from '../src/use-cases/identity-providers.js';
import { cliContext } from '../src/use-cases/deps.js';
import { completeStoredUsers } from '../src/use-cases/user-list-keys.js';
import { body, type Harness, harness } from './helpers.js';

/** The users and group members lists (issue 17): cursors, sort, multi-value filters. */

const HOUR = 3_600_000;

/** The `n`th former staff member's name and email: their initials go round the alphabet. */
const formerName = (n: number) => `${String.fromCharCode(65 + (n % 26))}. Former ${n}`;
const formerEmail = (n: number) => `${String.fromCharCode(97 + (n % 26))}.former-${n}@corp.test`;

/**
 * `count` former staff as stored (the list keys the repository writes included), one every two
 * hours up to `now`, the newest last: `formerEmail(n)`, `formerName(n)`, inactive viewers.
 */
function formerStaff(count: number, now: number, vary: (n: number) => Record<string, unknown>) {
  return Array.from({ length: count }, (_, n) => {
    const at = new Date(now - (count - n) * 2 * HOUR);
    const user = {
      _id: `usr_former${String(n).padStart(6, '0')}`,
      email: formerEmail(n),
      emailKey: formerEmail(n),
      name: formerName(n),
      role: 'viewer',
      status: 'inactive',
      isVip: false,
      groups: [],
      metadata: { note: 'left the company '.repeat(40) },
      identityProvider: 'local',
      externalId: `ext-${n}`,
      passwordHash: null,
      lastLoginAt: null,
      deactivatedAt: at,
      createdAt: at,
      updatedAt: at,
      rev: 0,
      ...vary(n),
    };
    return { ...user, ...userListKeys(user) };
  });
}

/** Users straight into the store, oldest first, the lists' spans widened to them as the repository does. */
async function storeUsers(
  h: Harness,
  users: (Record<string, unknown> & { createdAt: Date; updatedAt: Date })[],
) {
  const model = userModel(h.conn);
  for (let n = 0; n < users.length; n += 500) await model.insertMany(users.slice(n, n + 500), { lean: true });
  // The spans and their day counts, as the repository's inserts keep them (walkBounds).
  const bounds = walkBounds(h.conn);
  await bounds.stored(
    'users',
    users.map((u) => u.createdAt.getTime()),
    true,
  );
  await bounds.stored(
    'users.updated',
    users.map((u) => u.updatedAt.getTime()),
    true,
  );
}

type Page = { statusCode: number; headers: Record<string, unknown>; body: string };
const emailsOf = (res: Page) => body(res).data.users.map((u: { email: string }) => u.email);

function refused(t: Test, res: Page, field: string, pattern: RegExp | string) {
  t.equal(res.statusCode, 400, `${field}: 400`);
  const error = body(res).error;
  t.equal(error.code, 'VALIDATION_ERROR');
  // The lists' own checks give details; what the schema refuses names the field in the message.
  const detail = error.details?.[0] ?? { field: error.message.split(' ')[0], message: error.message };
  t.equal(detail.field, field);
  t.match(detail.message, pattern);
}

t.test('users and members lists', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: admin });
  const group = body(
    await h.app.inject({ method: 'POST', url: '/v1/groups', headers: admin, payload: { name: 'Lists' } }),
  ).data.id as string;
  // Created in this order; names sort differently (code points: upper case first).
  const people = [
    { name: 'carol', role: 'agent' },
    { name: 'Alice', role: 'viewer' },
    { name: 'bob', role: 'agent' },
    { name: 'Dave', role: 'admin' },
    { name: 'erin', role: 'viewer' },
  ];
  const ids: string[] = [];
  for (const [n, p] of people.entries()) {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: admin,
      payload: { email: `lst-${n}@corp.test`, name: p.name, role: p.role, groups: [group] },
    });
    t.equal(res.statusCode, 201);
    ids.push(body(res).data.id);
    h.advance(1000);
  }
  const emails = people.map((_, n) => `lst-${n}@corp.test`);

  await t.test('cursor pages with Link headers, and the same order as page mode', async (t) => {
    const first = await get('/v1/users?search=lst-&limit=2');
    t.same(emailsOf(first), [emails[4], emails[3]]);
    t.equal(first.headers.link, '</v1/users?search=lst-&limit=2&page=2>; rel="next"');
    const walked = [...emailsOf(first)];
    let cursor = body(first).data.pagination.nextCursor;
    for (let n = 0; n < 5 && cursor; n++) {
      const page = await get(`/v1/users?search=lst-&limit=2&cursor=${cursor}`);
      t.same(Object.keys(body(page).data.pagination).sort(), [
        'hasMore',
        'limit',
        'nextCursor',
        'prevCursor',
      ]);
      if (body(page).data.pagination.hasMore) t.match(String(page.headers.link), 'rel="next"');
      walked.push(...emailsOf(page));
      cursor = body(page).data.pagination.nextCursor;
    }
    t.same(walked, [...emails].reverse());
    const c = body(first).data.pagination.nextCursor;
    refused(t, await get(`/v1/users?search=other&limit=2&cursor=${c}`), 'query.cursor', /other filters/);
    refused(t, await get(`/v1/users?search=lst-&page=1&cursor=${c}`), 'query.page', /cursor/);
    refused(t, await get('/v1/users?cursor=AAAA'), 'query.cursor', /not a cursor/);
  });

  await t.test('sort by name, email, dates; unknown fields refused', async (t) => {
    t.same(emailsOf(await get('/v1/users?search=lst-&sort=name')), [
      emails[1],
      emails[3],
      emails[2],
      emails[0],
      emails[4],
    ]);
    t.same(emailsOf(await get('/v1/users?search=lst-&sort=-name')), [
      emails[4],
      emails[0],
      emails[2],
      emails[3],
      emails[1],
    ]);
    t.same(emailsOf(await get('/v1/users?search=lst-&sort=email')), emails);
    t.same(emailsOf(await get('/v1/users?search=lst-&sort=createdAt')), emails);
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/users/${ids[1]}`,
      headers: admin,
      payload: { isVip: true },
    });
    t.equal(emailsOf(await get('/v1/users?search=lst-&sort=-updatedAt'))[0], emails[1]);
    // A cursor walk in name order.
    const walked: string[] = [];
    let url = '/v1/users?search=lst-&sort=name&limit=2';
    for (let n = 0; n < 5 && url; n++) {
      const page = await get(url);
      walked.push(...emailsOf(page));
      const next = body(page).data.pagination.nextCursor;
      url = next ? `/v1/users?search=lst-&sort=name&limit=2&cursor=${next}` : '';
    }
    t.same(walked, [emails[1], emails[3], emails[2], emails[0], emails[4]]);
    refused(
      t,
      await get('/v1/users?sort=role'),
      'query.sort',
      'createdAt, -createdAt, updatedAt, -updatedAt, name, -name, email, -email',
    );
  });

  await t.test('search: `q`, and `search` as its alias', async (t) => {
    t.same(emailsOf(await get('/v1/users?q=lst-&sort=email')), emails, 'q= is the search');
    t.same(emailsOf(await get('/v1/users?q=LST-1')), [emails[1]], 'name or email, any case');
    t.same(emailsOf(await get('/v1/users?q=lst-1&search=lst-1')), [emails[1]], 'both, the same: fine');
    const c = body(await get('/v1/users?search=lst-&limit=2')).data.pagination.nextCursor;
    t.equal((await get(`/v1/users?q=lst-&limit=2&cursor=${c}`)).statusCode, 200, 'one filter for cursors');
    refused(t, await get('/v1/users?q=lst-1&search=lst-2'), 'query.search', /contradicts query.q/);
    refused(t, await get(`/v1/users?q=${'a'.repeat(201)}`), 'query.q', /200/);
  });

  await t.test('multi-value role and status filters', async (t) => {
    t.same(emailsOf(await get('/v1/users?search=lst-&role=viewer,admin')), [emails[4], emails[3], emails[1]]);
    t.same(emailsOf(await get('/v1/users?search=lst-&role=agent&status=active,inactive')), [
      emails[2],
      emails[0],
    ]);
    refused(t, await get('/v1/users?role=boss,agent'), 'query.role', /one or more of admin, agent, viewer/);
    t.equal(
      emailsOf(await get('/v1/users?search=lst-&role=%20viewer%20,%20admin')).length,
      3,
      'spaces around',
    );
    refused(t, await get('/v1/users?role=viewer%09'), 'query.role', /admin, agent, viewer/);
    refused(t, await get('/v1/users?status=gone'), 'query.status', /active, inactive/);
  });

  await t.test('group members: the same filters, sort and cursors', async (t) => {
    const members = (query: string) => get(`/v1/groups/${group}/members${query}`);
    const first = await members('?sort=name&limit=2&role=agent,viewer');
    t.same(emailsOf(first), [emails[1], emails[2]]);
    t.equal(
      first.headers.link,
      `</v1/groups/${group}/members?sort=name&limit=2&role=agent%2Cviewer&page=2>; rel="next"`,
    );
    const next = await members(
      `?sort=name&limit=2&role=agent,viewer&cursor=${body(first).data.pagination.nextCursor}`,
    );
    t.same(emailsOf(next), [emails[0], emails[4]]);
    t.equal(body(next).data.pagination.hasMore, false);
    refused(t, await members('?role=nobody'), 'query.role', /admin, agent, viewer/);
    t.equal((await get('/v1/groups/grp_00000000000000000000000000/members')).statusCode, 404);
  });

  await t.test('cursor pages are stable under concurrent inserts', async (t) => {
    const seen: string[] = [];
    let url = '/v1/users?search=lst-&limit=2';
    for (let round = 0; round < 10 && url; round++) {
      const racing = h.app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: admin,
        payload: { email: `lst-new${round}@corp.test`, name: 'New', role: 'viewer' },
      });
      const [page] = await Promise.all([get(url), racing]);
      seen.push(...emailsOf(page));
      const next = body(page).data.pagination.nextCursor;
      url = next ? `/v1/users?search=lst-&limit=2&cursor=${next}` : '';
    }
    t.equal(url, '', 'reached the end');
    t.equal(new Set(seen).size, seen.length, 'nothing repeated');
    t.same(
      seen.filter((e) => emails.includes(e)),
      [...emails].reverse(),
      'every user of the start, once',
    );
  });
});

t.test('overload: lists and searches past their limits are refused at once; reads go on', async (t) => {
  const h = await harness(t, { LIST_CONCURRENCY: '1', SEARCH_CONCURRENCY: '1' }, { countCommands: true });
  const admin = await h.headers('admin');
  const get = (url: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url, headers: { ...admin, ...headers } });
  const user = body(
    await h.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: admin,
      payload: { email: 'busy@corp.test', name: 'Busy', role: 'agent' },
    }),
  ).data.id as string;
  checkBurst(
    t,
    await burstPastLimit(
      () => get('/v1/users?role=agent'),
      () => get(`/v1/users/${user}`),
    ),
    /lists/,
  );
  checkBurst(
    t,
    await burstPastLimit(
      () => get('/v1/users?q=busy'),
      () => get('/v1/users?role=agent'),
    ),
    /searches/,
  );
  t.equal((await get('/v1/groups')).statusCode, 200, 'every slot is given back once answered');
  await checkListDeadline(t, h.conn, 'users', (headers) => get('/v1/users', headers));
});

t.test('every list query the repository builds is answered from a declared index (MongoDB)', async (t) => {
  const h = await harness(t, {}, { countCommands: true });
  const admin = await h.headers('admin');
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: admin });
  const group = body(
    await h.app.inject({ method: 'POST', url: '/v1/groups', headers: admin, payload: { name: 'Covered' } }),
  ).data.id as string;
  for (const n of [1, 2])
    await h.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: admin,
      payload: { email: `cov-${n}@corp.test`, name: `Cov ${n}`, role: 'agent', groups: [group] },
    });
  const filters = ['', 'role=agent', 'status=active', 'role=agent,viewer&status=active', 'q=cov'];
  const sorts = ['', 'sort=createdAt', 'sort=-updatedAt', 'sort=name', 'sort=-email'];
  const queries = await listQueriesOf(h.conn, 'users', async () => {
    for (const f of filters)
      for (const s of sorts)
        for (const path of ['/v1/users', `/v1/groups/${group}/members`]) {
          const query = [f, s, 'limit=1'].filter(Boolean).join('&');
          if (path !== '/v1/users' && f.startsWith('q=')) continue;
          const first = await get(`${path}?${query}`);
          t.equal(first.statusCode, 200, `${path}?${query}`);
          const next = body(first).data.pagination.nextCursor;
          if (next) await get(`${path}?${query}&cursor=${next}`);
        }
  });
  t.ok(queries.length > filters.length * sorts.length, `${queries.length} queries seen`);
  t.same(uncovered(queries, declaredIndexes(UserSchema)), [], 'no scan, no sort in memory');
});

/** The header of a SCIM connection's calls. */
const scimHeaders = (token: string) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/scim+json',
});

t.test(
  'every users list page and SCIM list is read through an index on PostgreSQL (FerretDB plans)',
  async (t) => {
    // The plans are the point, not the time: a loaded machine gets more than the 10 s deadline.
    const h = await harness(t, { CALL_TIMEOUT_MS: '60000' }, { countCommands: true });
    const { token } = (await createIdentityProvider(h.deps, cliContext(), {
      name: 'plans-idp',
      kind: 'scim',
    })) as {
      token: string;
    };
    // Former staff, straight into the store (with the keys the repository writes), one every two
    // hours over the last 250 days: enough rows that PostgreSQL plans as for a real table. The
    // first 1,000 are VIPs, the last 1,000 the SCIM connection's.
    const now = h.deps.clock().getTime();
    const former = formerStaff(3000, now, (n) => ({
      isVip: n < 1000,
      identityProvider: n >= 2000 ? 'plans-idp' : 'local',
    }));
    await storeUsers(h, former);
    const admin = await h.headers('admin');
    const get = (url: string) => h.app.inject({ method: 'GET', url, headers: admin });
    const scim = (url: string) =>
      h.app.inject({ method: 'GET', url: `/scim/v2${url}`, headers: scimHeaders(token) });
    const group = body(
      await h.app.inject({ method: 'POST', url: '/v1/groups', headers: admin, payload: { name: 'Planned' } }),
    ).data.id as string;
    for (const n of [1, 2, 3])
      await h.app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: admin,
        payload: { email: `plan-${n}@corp.test`, name: `Plan ${n}`, role: 'agent', groups: [group] },
      });
    const filters = [
      '',
      'role=agent',
      'status=active',
      'role=agent&status=active',
      'role=agent,viewer',
      'isVip=true',
      'q=plan',
      'q=former-2999@corp',
      'status=active&q=plan',
    ];
    const sorts = ['', 'sort=name', 'sort=-updatedAt', 'sort=email'];
    const queries = await listQueriesOf(h.conn, 'users', async () => {
      for (const f of filters)
        for (const s of sorts)
          for (const path of ['/v1/users', `/v1/groups/${group}/members`]) {
            const query = [f, s, 'limit=1'].filter(Boolean).join('&');
            if (path !== '/v1/users' && /q=|isVip/.test(f)) continue;
            const first = await get(`${path}?${query}`);
            t.equal(first.statusCode, 200, `${path}?${query}`);
            const next = body(first).data.pagination.nextCursor;
            if (next) await get(`${path}?${query}&cursor=${next}`);
          }
      for (const url of [
        '/Users?count=5',
        '/Users?startIndex=20&count=5',
        `/Users?filter=${encodeURIComponent(`userName eq "${formerEmail(2500)}"`)}`,
        `/Users?filter=${encodeURIComponent(`emails.value eq "${formerEmail(2501)}"`)}`,
        `/Users?filter=${encodeURIComponent(`displayName eq "${formerName(2502)}"`)}`,
        `/Users?filter=${encodeURIComponent('externalId eq "ext-2503"')}`,
      ])
        t.equal((await scim(url)).statusCode, 200, `SCIM ${url}`);
    });
    await checkIndexedPlans(t, h.conn, 'users', queries, filters.length * 4);
    // The same queries on MongoDB (hours, days, months of a walk sized by the day counts): each
    // from a declared index, its sort included.
    t.same(uncovered(queries, declaredIndexes(UserSchema)), [], 'MongoDB: no scan, no sort in memory');
    t.ok(
      ['createdDay', 'createdMonth'].every((k) => queries.some((q) => k in q.filter)),
      'the walk read days and months (hours: the dense day below)',
    );

    await t.test('the SCIM lists find what they are asked for', async (t) => {
      const listed = (res: Page) =>
        JSON.parse(res.body) as { totalResults: number; Resources: { userName: string }[] };
      const all = listed(await scim('/Users?count=3'));
      t.equal(all.totalResults, 1000, 'the connection has 1,000 users');
      t.same(
        all.Resources.map((r) => r.userName),
        [formerEmail(2999), formerEmail(2998), formerEmail(2997)],
        'newest first',
      );
      const named = listed(
        await scim(`/Users?filter=${encodeURIComponent(`displayName eq "${formerName(2502)}"`)}`),
      );
      t.same(
        named.Resources.map((r) => r.userName),
        [formerEmail(2502)],
      );
      const byEmail = listed(
        await scim(`/Users?filter=${encodeURIComponent(`userName eq "${formerEmail(2500).toUpperCase()}"`)}`),
      );
      t.same(
        byEmail.Resources.map((r) => r.userName),
        [formerEmail(2500)],
      );
    });

    await t.test(
      'totals are exact up to 1,000 and capped past it; the pages past the cap answer',
      async (t) => {
        const vip = body(await get('/v1/users?isVip=true&limit=100')).data.pagination;
        t.equal(vip.total, 1000, 'exactly 1,000 VIPs: counted');
        t.equal(vip.totalCapped, undefined, 'not past the cap');
        t.equal(vip.pages, 10);
        const inactive = body(await get('/v1/users?status=inactive&limit=100')).data.pagination;
        t.equal(inactive.total, 1000, '3,000 former staff: the cap');
        t.equal(inactive.totalCapped, true);
        const past = body(await get('/v1/users?status=inactive&limit=100&page=25')).data;
        t.equal(past.users.length, 100, 'a page past the cap still answers');
        t.equal(past.users[0].email, formerEmail(599), 'at its place: 2,400 newer before it');
        const byName = body(await get('/v1/users?status=inactive&sort=name&limit=100&page=3')).data;
        t.equal(byName.pagination.total, 1000);
        t.equal(byName.users[0].name, 'B. Former 2939', 'by name (code points): 200 before it');
      },
    );
  },
);

/** The users filters of the `find`s and counts (`aggregate`) `run` sent, in order. */
async function usersReadsOf(h: Harness, run: () => Promise<unknown>) {
  const reads: Record<string, unknown>[] = [];
  for (const { name, command } of (await commandsOf(h.conn, run)).commands) {
    if (name === 'find' && command.find === 'users') reads.push(command.filter as Record<string, unknown>);
    if (name === 'aggregate' && command.aggregate === 'users') {
      const match = (command.pipeline as { $match?: Record<string, unknown> }[])[0]?.$match;
      if (match) reads.push(match);
    }
  }
  return reads;
}

t.test(
  'a dense day is read an hour at a time and quiet days not at all (steps sized by the day counts)',
  async (t) => {
    const h = await harness(t, { CALL_TIMEOUT_MS: '60000' }, { countCommands: true });
    // 1,440 users in one day (one a minute, as a directory sync or the lists bench stores them),
    // ending five days before now; the days between hold nobody.
    const now = h.deps.clock().getTime();
    const dayStart = Math.floor(now / 86_400_000) * 86_400_000 - 6 * 86_400_000;
    const dense = formerStaff(1440, now, (n) => {
      const at = new Date(dayStart + n * 60_000);
      return { createdAt: at, updatedAt: at, deactivatedAt: at, role: n % 3 === 0 ? 'agent' : 'viewer' };
    });
    await storeUsers(h, dense);
    const admin = await h.headers('admin');
    const get = async (url: string) => body(await h.app.inject({ method: 'GET', url, headers: admin })).data;
    // And one user now: the walk starts today, and crosses the quiet days to the dense one.
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: admin,
      payload: { email: 'new-hire@example.test', name: 'New Hire', role: 'viewer' },
    });
    t.equal(created.statusCode, 201);
    const quietDays = [1, 2, 3, 4, 5].map((k) => dayKey(dayStart + k * 86_400_000));
    const denseDay = dayKey(dayStart);
    const shapes = ['', 'role=viewer', 'sort=createdAt', 'sort=-updatedAt'];
    const queries = await listQueriesOf(h.conn, 'users', async () => {
      for (const shape of shapes) {
        let page:
          { users: { email: string }[]; pagination: { total: number; nextCursor: string } } | undefined;
        const reads = await usersReadsOf(h, async () => {
          page = await get(`/v1/users?limit=20${shape ? `&${shape}` : ''}`);
        });
        // The step's key (an hour, day or month of the time), not its range's bounds.
        const keysOf = (r: Record<string, unknown>) =>
          JSON.stringify(Object.entries(r).filter(([k]) => /(Hour|Day|Month)$/.test(k)));
        t.notOk(
          reads.some((r) => quietDays.some((d) => keysOf(r).includes(d))),
          `${shape || 'no filter'}: no read of a quiet day`,
        );
        const first = reads.find((r) => keysOf(r).includes(denseDay));
        t.ok(
          first && ('createdHour' in first || 'updatedHour' in first),
          `${shape || 'no filter'}: its first step is an hour, not the day's 1,440 (${keysOf(first ?? {})})`,
        );
        const newestFirst = !shape.startsWith('sort=createdAt');
        const expected = (newestFirst ? [...dense].reverse() : dense)
          .filter((u) => shape !== 'role=viewer' || u.role === 'viewer')
          .slice(0, 20)
          .map((u) => u.email);
        t.same(
          page!.users.map((u) => u.email).filter((e) => e.endsWith('@corp.test')),
          expected.slice(0, page!.users.filter((u) => u.email.endsWith('@corp.test')).length),
          `${shape || 'no filter'}: the page in order`,
        );
        t.ok(page!.pagination.total >= (shape === 'role=viewer' ? 960 : 1000), 'the total counted');
      }
    });
    t.ok(
      queries.some((q) => 'createdHour' in q.filter),
      'hours read',
    );
    t.same(
      uncovered(queries, declaredIndexes(UserSchema)),
      [],
      'MongoDB: the hours from a declared index too',
    );
    // Cursor pages go on where the previous ended, across the hours of the dense day.
    const seen = new Set<string>();
    let cursor = '';
    for (let n = 0; n < 5; n++) {
      const page = await get(`/v1/users?limit=100&status=inactive${cursor ? `&cursor=${cursor}` : ''}`);
      for (const u of page.users as { email: string }[]) {
        t.notOk(seen.has(u.email), 'no user twice');
        seen.add(u.email);
      }
      cursor = page.pagination.nextCursor;
    }
    t.same([...seen].slice(0, 3), [formerEmail(1439), formerEmail(1438), formerEmail(1437)]);
    t.equal(seen.size, 500, 'five pages of 100');
  },
);

t.test('users stored before the list keys existed are given them at start', async (t) => {
  const h = await harness(t);
  const admin = await h.headers('admin');
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: admin });
  const now = h.deps.clock().getTime();
  // Stored as an older version wrote them: without the keys.
  const legacy = formerStaff(5, now, () => ({})).map((u) => {
    const { createdHour, createdDay, createdMonth, updatedHour, updatedDay, updatedMonth, ...rest } = u;
    void [createdHour, createdDay, createdMonth, updatedHour, updatedDay, updatedMonth];
    return {
      ...rest,
      email: `legacy-${u._id}@corp.test`,
      emailKey: `legacy-${u._id}@corp.test`,
      searchKeys: undefined,
      nameRank: undefined,
    };
  });
  await storeUsers(h, legacy);
  t.equal(body(await get('/v1/users?q=legacy-')).data.users.length, 0, 'not listed without their keys');
  await completeStoredUsers(h.deps);
  const listed = body(await get('/v1/users?q=legacy-&sort=name')).data;
  t.equal(listed.users.length, 5, 'listed once given their keys');
  t.equal(listed.pagination.total, 5);
  t.same(
    body(await get('/v1/users?q=legacy-&sort=-createdAt')).data.users.map((u: { id: string }) => u.id),
    legacy.map((u) => u._id).reverse(),
    'in their place by time',
  );
  const stored = await userModel(h.conn).findById(legacy[0]!._id).lean<{ updatedAt: Date; rev: number }>();
  t.same(
    stored!.updatedAt,
    legacy[0]!.updatedAt,
    'their change time kept: nothing changed for their readers',
  );
});
