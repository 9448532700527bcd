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
import { dayKey, hourKey } from '@support-desk/platform/core';
import { timedSpans } from '@support-desk/platform/store';
import t, { type Test } from 'tap';
import { requestModel } from '../src/store/requests.js';
import { completeStoredRequests } from '../src/use-cases/request-lists.js';
import { type Harness, HOUR, harness, MINUTE, validBody } from './helpers.js';

/** Lists that scale (issue 17): cursors, sort, multi-value filters, search, the changes feed. */

type Body = { data: { requests: { id: string }[]; pagination: Record<string, unknown> } };
/** The hours and days a request stored at `at` is listed by (as the repository writes them). */
const listTimeKeys = (at: Date) => ({
  createdHour: hourKey(at),
  createdDay: dayKey(at),
  updatedHour: hourKey(at),
  updatedDay: dayKey(at),
});
const idsOf = (body: Body) => body.data.requests.map((r) => r.id);

/** The counts (`countDocuments`, an aggregate) `operation` sends to the requests collection. */
const countsOf = async (h: Harness, operation: () => Promise<void>) =>
  (await commandsOf(h.conn, operation)).commands.filter(
    (c) => c.name === 'aggregate' && c.command.aggregate === 'requests',
  ).length;

async function seed(h: Harness, who: Parameters<Harness['call']>[0], specs: Record<string, unknown>[]) {
  const ids: string[] = [];
  for (const spec of specs) {
    const res = await h.call(who, 'POST', '/v1/requests', validBody(spec));
    if (res.status !== 201) throw new Error(`seed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.data.id);
    h.clock.advance(1000);
  }
  return ids;
}

/**
 * A 400 naming `field`: in `error.details` (the lists' own checks) or, for what the schema
 * refuses, at the start of `error.message` ("query.sort must be one of: …").
 */
function refused(t: Test, res: { status: number; body: any }, field: string, pattern: RegExp | string) {
  t.equal(res.status, 400, `${field}: 400`);
  t.equal(res.body.error.code, 'VALIDATION_ERROR');
  const detail = res.body.error.details?.[0] ?? {
    field: res.body.error.message.split(' ')[0],
    message: res.body.error.message,
  };
  t.equal(detail.field, field);
  t.match(detail.message, pattern);
}

t.test('cursor pages walk the list like page mode, with Link headers, both ways', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const ids = await seed(
    h,
    agent.principal,
    Array.from({ length: 7 }, (_, n) => ({ title: `Item ${n}` })),
  );
  const get = (url: string) => h.call(agent.principal, 'GET', url);

  const first = await get('/v1/requests?limit=3&status=open');
  t.same(idsOf(first.body), [ids[6], ids[5], ids[4]]);
  const p = first.body.data.pagination;
  t.same(Object.keys(p).sort(), ['limit', 'nextCursor', 'page', 'pages', 'total']);
  t.equal(p.total, 7);
  t.match(p.nextCursor, /^[A-Za-z0-9_-]+$/);
  t.equal(
    first.headers.link,
    '</v1/requests?limit=3&status=open&page=2>; rel="next"',
    'page mode links by page',
  );

  const second = await get(`/v1/requests?limit=3&status=open&cursor=${p.nextCursor}`);
  t.same(idsOf(second.body), [ids[3], ids[2], ids[1]]);
  const c = second.body.data.pagination;
  t.same(Object.keys(c).sort(), ['hasMore', 'limit', 'nextCursor', 'prevCursor'], 'cursor mode: no count');
  t.equal(c.hasMore, true);
  const links = String(second.headers.link);
  t.match(links, `</v1/requests?limit=3&status=open&cursor=${c.nextCursor}>; rel="next"`);
  t.match(links, `</v1/requests?limit=3&status=open&cursor=${c.prevCursor}>; rel="prev"`);

  const third = await get(`/v1/requests?limit=3&status=open&cursor=${c.nextCursor}`);
  t.same(idsOf(third.body), [ids[0]]);
  t.same(
    { ...third.body.data.pagination, prevCursor: 'x' },
    { limit: 3, nextCursor: null, prevCursor: 'x', hasMore: false },
  );
  t.notMatch(String(third.headers.link), 'rel="next"', 'no next link on the last page');

  const back = await get(`/v1/requests?limit=3&status=open&cursor=${third.body.data.pagination.prevCursor}`);
  t.same(idsOf(back.body), [ids[3], ids[2], ids[1]], 'prev: the page before, in list order');
  const backAgain = await get(
    `/v1/requests?limit=3&status=open&cursor=${back.body.data.pagination.prevCursor}`,
  );
  t.same(idsOf(backAgain.body), [ids[6], ids[5], ids[4]]);
  t.equal(backAgain.body.data.pagination.prevCursor, null, 'the start of the list');

  // The limit may change between calls; page and cursor together may not.
  t.same(idsOf((await get(`/v1/requests?limit=1&status=open&cursor=${p.nextCursor}`)).body), [ids[3]]);
  refused(t, await get(`/v1/requests?page=2&status=open&cursor=${p.nextCursor}`), 'query.page', /cursor/);
});

t.test('bad, tampered and mismatched cursors are 400s on query.cursor', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  await seed(h, agent.principal, [{}, {}, {}]);
  const get = (url: string) => h.call(agent.principal, 'GET', url);
  const cursor = (await get('/v1/requests?limit=1&priority=high')).body.data.pagination.nextCursor as string;
  const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  const forged = (change: object) =>
    Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url');

  refused(t, await get('/v1/requests?cursor=not-a-cursor'), 'query.cursor', /not a cursor/);
  refused(
    t,
    await get(`/v1/requests?priority=high&cursor=${forged({ k: [{ $gt: '' }] })}`),
    'query.cursor',
    /not a cursor/,
  );
  refused(
    t,
    await get(`/v1/requests?priority=high&cursor=${forged({ v: 9 })}`),
    'query.cursor',
    /not a cursor/,
  );
  refused(t, await get(`/v1/requests?priority=high&cursor=${cursor}x`), 'query.cursor', /not a cursor/);
  refused(t, await get(`/v1/requests?priority=low&cursor=${cursor}`), 'query.cursor', /other filters/);
  refused(
    t,
    await get(`/v1/requests?priority=high&sort=createdAt&cursor=${cursor}`),
    'query.cursor',
    /sort=-createdAt/,
  );
  t.equal((await get(`/v1/requests?priority=high&cursor=${cursor}`)).status, 200, 'the same filters: fine');
});

t.test('cursor paging is stable under concurrent inserts', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const existing = await seed(
    h,
    agent.principal,
    Array.from({ length: 12 }, () => ({})),
  );
  const seen: string[] = [];
  let url = '/v1/requests?limit=4';
  const first = h.clock.now().getTime() - 12_000;
  for (let round = 0; round < 10 && url; round++) {
    // Inserts racing the read, stamped between existing items (read or not yet read), and at
    // the same instant as one (the id breaks the tie).
    h.clock.current = new Date(first + ((round * 5) % 12) * 1000 + (round % 2 ? 500 : 0));
    const racing = Promise.all([
      h.call(agent.principal, 'POST', '/v1/requests', validBody({ title: 'new' })),
      h.call(agent.principal, 'POST', '/v1/requests', validBody({ title: 'new' })),
    ]);
    const page = await h.call(agent.principal, 'GET', url);
    await racing;
    seen.push(...idsOf(page.body));
    const next = page.body.data.pagination.nextCursor;
    url = next ? `/v1/requests?limit=4&cursor=${next}` : '';
  }
  t.equal(url, '', 'reached the end');
  t.equal(new Set(seen).size, seen.length, 'no item repeated');
  t.same(
    seen.filter((id) => existing.includes(id)),
    [...existing].reverse(),
    'every item that existed at the start, once, in order',
  );
});

t.test('sort: dates both ways, priority by severity, unknown fields refused', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const ids = await seed(h, agent.principal, [
    { priority: 'low' },
    { priority: 'critical' },
    { priority: 'medium' },
    { priority: 'high' },
    { priority: 'critical' },
  ]);
  const get = (query: string) => h.call(agent.principal, 'GET', `/v1/requests${query}`);
  t.same(idsOf((await get('?sort=createdAt')).body), ids, 'oldest first');
  t.same(idsOf((await get('?sort=-createdAt')).body), [...ids].reverse(), 'the default');
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[0]}`, { title: 'Touched' });
  t.same(idsOf((await get('?sort=-updatedAt')).body)[0], ids[0], 'last changed first');
  t.same(idsOf((await get('?sort=updatedAt')).body).at(-1), ids[0]);
  t.same(
    idsOf((await get('?sort=-priority')).body),
    [ids[4], ids[1], ids[3], ids[2], ids[0]],
    'critical first, newest first',
  );
  t.same(
    idsOf((await get('?sort=priority')).body),
    [ids[0], ids[2], ids[3], ids[1], ids[4]],
    'low first, oldest first',
  );
  // Cursor paging in the priority order crosses the severity boundaries.
  const walked: string[] = [];
  let query = '?sort=-priority&limit=2';
  for (let n = 0; n < 5 && query; n++) {
    const page = (await get(query)).body;
    walked.push(...idsOf(page));
    query = page.data.pagination.nextCursor
      ? `?sort=-priority&limit=2&cursor=${page.data.pagination.nextCursor}`
      : '';
  }
  t.same(walked, [ids[4], ids[1], ids[3], ids[2], ids[0]]);
  refused(
    t,
    await get('?sort=title'),
    'query.sort',
    'createdAt, -createdAt, updatedAt, -updatedAt, priority, -priority',
  );
});

t.test('multi-value filters', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const ids = await seed(h, agent.principal, [
    { priority: 'low' },
    { priority: 'critical' },
    { priority: 'high' },
    {},
  ]);
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[0]}`, { status: 'pending' });
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[1]}`, { status: 'in_progress' });
  const get = (query: string) => h.call(agent.principal, 'GET', `/v1/requests${query}`);
  t.same(idsOf((await get('?status=open,pending')).body), [ids[3], ids[2], ids[0]]);
  t.same(idsOf((await get('?priority=critical,high')).body), [ids[3], ids[2], ids[1]]);
  t.same(idsOf((await get('?priority=critical,high&status=open')).body), [ids[3], ids[2]]);
  t.same(idsOf((await get('?status=pending,pending')).body), [ids[0]], 'duplicates are harmless');
  refused(
    t,
    await get('?status=open,bogus'),
    'query.status',
    /one or more of open, assigned, in_progress, pending, resolved, closed, separated by commas/,
  );
  refused(
    t,
    await get('?priority=critical,'),
    'query.priority',
    /one or more of critical, high, medium, low/,
  );
});

t.test('search: title, description and tags, case-insensitive, literal, bounded', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const ids = await seed(h, agent.principal, [
    { title: 'VPN drops every hour' },
    { title: 'Printer', description: 'Toner (black) is out' },
    { title: 'Laptop', tags: ['Hardware', 'loaner'] },
    { title: 'a.c', description: 'x' },
    { title: 'abc', description: 'y' },
  ]);
  const get = (query: string) => h.call(agent.principal, 'GET', `/v1/requests${query}`);
  t.same(idsOf((await get('?q=vpn')).body), [ids[0]], 'title, any case');
  t.same(idsOf((await get('?q=TONER%20(BLACK)')).body), [ids[1]], 'description; parentheses are text');
  t.same(idsOf((await get('?q=hardw')).body), [ids[2]], 'a tag');
  t.same(idsOf((await get('?q=a.c')).body), [ids[3]], 'a dot is a dot, not any character');
  t.same(idsOf((await get('?q=.*')).body), [], 'no pattern syntax');
  t.same(idsOf((await get('?q=o&priority=high&limit=2')).body).length, 2, 'combines with filters and paging');
  const cursor = (await get('?q=o&limit=2')).body.data.pagination.nextCursor;
  t.equal((await get(`?q=o&limit=2&cursor=${cursor}`)).status, 200);
  refused(t, await get(`?q=x&limit=2&cursor=${cursor}`), 'query.cursor', /other filters/);
  refused(t, await get(`?q=${'a'.repeat(101)}`), 'query.q', /100/);
  refused(t, await get('?q=%20%20'), 'query.q', /blank/);
});

t.test('changes feed: every change in order, tombstones, the role view, then polling', async (t) => {
  const h = await harness(t, { CHANGES_SETTLE_MS: 0 });
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const admin = h.identity.person('admin');
  const ids = await seed(h, agent.principal, [{}, {}, {}]);
  await h.call(agent.principal, 'POST', `/v1/requests/${ids[0]}/comments`, {
    content: 'secret',
    isInternal: true,
  });
  h.clock.advance(1000);
  await h.call(admin.principal, 'DELETE', `/v1/requests/${ids[1]}`);
  h.clock.advance(1000);
  const feed = (who: typeof agent, query = '') =>
    h.call(who.principal, 'GET', `/v1/requests/changes${query}`);

  const all = await feed(viewer, '?limit=2');
  t.equal(all.status, 200);
  t.same(
    all.body.data.changes.map((c: { id: string }) => c.id),
    [ids[2], ids[0]],
    'oldest change first',
  );
  t.equal(all.body.data.pagination.hasMore, true);
  t.same(all.body.data.changes[1].request.comments, [], 'a viewer does not see internal notes');
  t.match(all.headers.link, /^<\/v1\/requests\/changes\?limit=2&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
  const rest = await feed(viewer, `?limit=2&cursor=${all.body.data.pagination.nextCursor}`);
  const deletedAt = new Date(h.clock.now().getTime() - 1000).toISOString();
  t.same(rest.body.data.changes, [{ id: ids[1], deleted: true, deletedAt }], 'a tombstone');
  t.equal(rest.body.data.pagination.hasMore, false);
  const asAgent = await feed(agent);
  t.equal(
    asAgent.body.data.changes.find((c: { id: string }) => c.id === ids[0]).request.comments.length,
    1,
    'agents do',
  );

  // Polling: nothing new keeps the cursor usable; a change comes once, at its latest state.
  const cursor = rest.body.data.pagination.nextCursor;
  const idle = await feed(viewer, `?cursor=${cursor}`);
  t.same(idle.body.data.changes, []);
  t.equal(typeof idle.body.data.pagination.nextCursor, 'string', 'always a cursor to poll with');
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[2]}`, { title: 'First' });
  h.clock.advance(1000);
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[2]}`, { title: 'Second' });
  const polled = await feed(viewer, `?cursor=${idle.body.data.pagination.nextCursor}`);
  t.same(
    polled.body.data.changes.map((c: { request: { title: string } }) => c.request.title),
    ['Second'],
  );

  refused(
    t,
    await feed(
      viewer,
      `?cursor=${(await h.call(agent.principal, 'GET', '/v1/requests?limit=1')).body.data.pagination.nextCursor}`,
    ),
    'query.cursor',
    /sort=/,
  );
  refused(t, await feed(viewer, '?cursor=%21'), 'query.cursor', /not a cursor/);
});

t.test(
  'changes feed: the settle delay keeps a late write stamped earlier from being passed over',
  async (t) => {
    const h = await harness(t, { CHANGES_SETTLE_MS: 60_000 });
    const agent = h.identity.person('agent');
    const start = h.clock.now().getTime();
    const at = (seconds: number) => {
      h.clock.current = new Date(start + seconds * 1000);
    };
    const [a, b] = await seed(h, agent.principal, [{}, {}]);
    const feed = (query = '') => h.call(agent.principal, 'GET', `/v1/requests/changes${query}`);
    t.same((await feed()).body.data.changes, [], 'younger than the settle delay: not served yet');
    at(150);
    await h.call(agent.principal, 'PATCH', `/v1/requests/${b}`, { title: 'On time' });
    at(160);
    const served = await feed();
    t.same(
      served.body.data.changes.map((c: { id: string }) => c.id),
      [a],
      'only what is 60 s old',
    );
    // A replica whose clock runs 30 s behind writes a at 160 s: stamped 130 s, before b's change
    // (150 s), which a feed without the delay would already have served (and moved past).
    at(130);
    await h.call(agent.principal, 'PATCH', `/v1/requests/${a}`, { title: 'Late' });
    at(220);
    const next = await feed(`?cursor=${served.body.data.pagination.nextCursor}`);
    t.same(
      next.body.data.changes.map((c: { request: { title: string } }) => c.request.title),
      ['Late', 'On time'],
      'the late write is served, in change order',
    );
  },
);

t.test('requester and tags filters: equalities the store serves from an index', async (t) => {
  const h = await harness(t, {}, { counted: true });
  const alice = h.identity.person('agent');
  const bob = h.identity.person('agent');
  const ids = [
    ...(await seed(h, alice.principal, [{ tags: ['vpn', 'billing'] }, { tags: ['printer'] }])),
    ...(await seed(h, bob.principal, [{ tags: ['vpn'] }, {}])),
  ];
  const get = (query: string) => h.call(alice.principal, 'GET', `/v1/requests${query}`);
  t.same(idsOf((await get(`?requester=${alice.user.id}`)).body), [ids[1], ids[0]], "alice's");
  t.same(idsOf((await get(`?requester=${bob.user.id}`)).body), [ids[3], ids[2]], "bob's");
  t.same(idsOf((await get('?tags=vpn')).body), [ids[2], ids[0]], 'one tag');
  t.same(idsOf((await get('?tags=printer,billing')).body), [ids[1], ids[0]], 'several tags: any of them');
  t.same(idsOf((await get(`?tags=vpn&requester=${bob.user.id}`)).body), [ids[2]], 'combined');
  t.same(idsOf((await get('?tags=VPN')).body), [], 'a tag matches as stored (q searches any case)');

  // The same tags in another order are the same filter: a cursor of one pages the other.
  const cursor = (await get('?tags=printer,billing,vpn&limit=1')).body.data.pagination.nextCursor;
  t.same(idsOf((await get(`?tags=vpn,billing,printer&limit=1&cursor=${cursor}`)).body), [ids[1]]);

  // What the store is asked: top-level equalities on scalars, which FerretDB on PostgreSQL pushes
  // down (and its GIN indexes serve) and MongoDB answers from {deletedAt, requesterId|tags, …}.
  const filters: Record<string, unknown>[] = [];
  const watch = (e: { commandName: string; command: Record<string, any> }) => {
    if (e.commandName === 'find' && e.command.find === 'requests') filters.push(e.command.filter);
  };
  h.conn.getClient().on('commandStarted', watch);
  await get(`?requester=${bob.user.id}&tags=vpn`);
  h.conn.getClient().off('commandStarted', watch);
  t.equal(filters.length, 1);
  t.equal(filters[0]?.requesterId, bob.user.id, 'requester: a top-level equality');
  t.equal(filters[0]?.tags, 'vpn', 'one tag: a top-level equality');

  refused(t, await get('?requester=bob'), 'query.requester', /user id/);
  refused(t, await get('?tags='), 'query.tags', /tags separated by commas/);
  refused(t, await get('?tags=vpn,,printer'), 'query.tags', /tags separated by commas/);
  refused(t, await get('?tags=%20vpn'), 'query.tags', /tags separated by commas/);
  refused(t, await get(`?tags=${'x'.repeat(51)}`), 'query.tags', /tags separated by commas/);
  const many = Array.from({ length: 21 }, (_, n) => `t${n}`).join(',');
  refused(t, await get(`?tags=${many}`), 'query.tags', /at most 20/);
});

t.test(
  'requests stored before the requester filter and the list hours existed are found after a start',
  async (t) => {
    const h = await harness(t);
    const agent = h.identity.person('agent');
    const [id] = await seed(h, agent.principal, [{}]);
    // As an older release stored it: without the top-level requester id, the hours, the bounds.
    await h.conn
      .collection('requests')
      .updateOne({ _id: id as never }, { $unset: { requesterId: '', ...listTimeKeys(new Date()) } });
    await h.conn.collection('listBounds').deleteMany({});
    const mine = () => h.call(agent.principal, 'GET', `/v1/requests?requester=${agent.user.id}`);
    const all = (sort: string) => h.call(agent.principal, 'GET', `/v1/requests?sort=${sort}`);
    t.same(idsOf((await mine()).body), [], 'not found by the filter yet');
    t.same(idsOf((await all('-updatedAt')).body), [], 'nor in the hours of a list');
    await completeStoredRequests(h.deps);
    t.same(idsOf((await mine()).body), [id], 'the start gave it its requester id');
    for (const sort of ['-createdAt', 'updatedAt', '-priority'])
      t.same(idsOf((await all(sort)).body), [id], `and its hours: sort=${sort}`);
    const after = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
    t.equal(after.updatedAt, after.createdAt, 'not a change for its readers');
  },
);

t.test('search: `q`, and `search` as its alias', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const ids = await seed(h, agent.principal, [
    { title: 'VPN drops' },
    { title: 'Toner' },
    { title: 'VPN slow' },
  ]);
  const get = (query: string) => h.call(agent.principal, 'GET', `/v1/requests${query}`);
  t.same(idsOf((await get('?search=vpn')).body), [ids[2], ids[0]], 'search= is q=');
  t.same(idsOf((await get('?q=vpn&search=vpn')).body), [ids[2], ids[0]], 'both, the same: fine');
  const cursor = (await get('?q=vpn&limit=1')).body.data.pagination.nextCursor;
  t.same(idsOf((await get(`?search=vpn&limit=1&cursor=${cursor}`)).body), [ids[0]], 'one filter for cursors');
  refused(t, await get('?q=vpn&search=toner'), 'query.search', /contradicts query.q/);
  refused(t, await get('?search=%20'), 'query.search', /blank/);
  refused(t, await get(`?search=${'a'.repeat(101)}`), 'query.search', /100/);
});

t.test('overload: lists and searches past their limits are refused at once; reads go on', async (t) => {
  const h = await harness(t, { LIST_CONCURRENCY: 1, SEARCH_CONCURRENCY: 1 }, { counted: true });
  const agent = h.identity.person('agent');
  const [id] = await seed(h, agent.principal, [{ title: 'VPN drops' }, { title: 'Toner' }]);
  const get = async (url: string, headers?: Record<string, string>) => {
    const res = await h.call(agent.principal, 'GET', url, undefined, headers);
    return { statusCode: res.status, headers: res.headers, body: JSON.stringify(res.body) };
  };
  // Lists beside a single read, then searches (their own limit) beside a list.
  checkBurst(
    t,
    await burstPastLimit(
      () => get('/v1/requests?status=open'),
      () => get(`/v1/requests/${id}`),
    ),
    /lists/,
  );
  checkBurst(
    t,
    await burstPastLimit(
      () => get('/v1/requests?q=vpn'),
      () => get('/v1/requests?status=open'),
    ),
    /searches/,
  );
  t.equal((await get('/v1/requests')).statusCode, 200, 'every slot is given back once answered');
  // Deadlines: the store reads of a call carry its remaining time (the gateway's budget).
  await checkListDeadline(t, h.conn, 'requests', (headers) => get('/v1/requests?status=open', headers));
});

t.test('every list query the repository builds is answered from a declared index (MongoDB)', async (t) => {
  const h = await harness(t, {}, { counted: true });
  const agent = h.identity.person('agent');
  const [id] = await seed(h, agent.principal, [{ tags: ['vpn'] }, { priority: 'low' }, {}]);
  const get = (url: string) => h.call(agent.principal, 'GET', url);
  const filters = [
    '',
    'status=open',
    'status=open,assigned',
    'priority=high',
    'status=open&priority=high',
    `assignedTo=${agent.user.id}`,
    `groupId=${h.identity.addGroup().id}`,
    `requester=${agent.user.id}`,
    'tags=vpn',
    'tags=vpn,printer',
    'createdAfter=2020-01-01T00:00:00Z&createdBefore=2040-01-01T00:00:00Z',
    'q=printer',
  ];
  const sorts = [
    '',
    'sort=createdAt',
    'sort=-updatedAt',
    'sort=updatedAt',
    'sort=-priority',
    'sort=priority',
  ];
  const queries = await listQueriesOf(h.conn, 'requests', async () => {
    for (const f of filters)
      for (const s of sorts) {
        const query = [f, s, 'limit=1'].filter(Boolean).join('&');
        const first = await get(`/v1/requests?${query}`);
        t.equal(first.status, 200, query, { error: first.body.error });
        const next = first.body.data.pagination.nextCursor;
        if (next) await get(`/v1/requests?${query}&cursor=${next}`);
      }
    const feed = await get('/v1/requests/changes?limit=1');
    await get(`/v1/requests/changes?cursor=${feed.body.data.pagination.nextCursor}`);
    await get(`/v1/requests/${id}`);
  });
  t.ok(queries.length > filters.length * sorts.length, `${queries.length} queries seen`);
  t.same(uncovered(queries, declaredIndexes(requestModel(h.conn).schema)), [], 'no scan, no sort in memory');
});

/**
 * Stored requests an older desk holds (closed, low, no one's), one a minute up to the clock's
 * now: enough rows that PostgreSQL plans as for a real table (on a few rows a full read is
 * cheaper and it rightly picks one), sixty an hour as the lists read them.
 */
async function storeOldRequests(h: Harness, count: number) {
  const start = h.clock.now().getTime() - count * MINUTE;
  const times = Array.from({ length: count }, (_, n) => new Date(start + n * MINUTE));
  const docs = times.map((at, n) => ({
    _id: `req_old${h.clock.now().getTime()}${n}`,
    title: `Old request ${n}`,
    description: 'An old request. '.repeat(60),
    status: 'closed',
    priority: 'low',
    priorityRank: 1,
    category: null,
    tags: [],
    requester: { id: `user_old${n}`, email: `old${n}@example.com`, name: 'Old' },
    requesterId: `user_old${n}`,
    assignedTo: null,
    assignedGroup: null,
    comments: [],
    attachments: [],
    deletedAt: null,
    createdAt: at,
    updatedAt: at,
    ...listTimeKeys(at),
    rev: 0,
  }));
  // Straight into the store (validation off): the test needs rows, not the service's checks.
  const requests = requestModel(h.conn);
  for (let n = 0; n < docs.length; n += 500)
    await requests.insertMany(docs.slice(n, n + 500), { lean: true });
  await timedSpans(h.conn, requests, 'requests').stored(docs[0]!.createdAt, docs[0]!.updatedAt);
}

t.test('every list page is read through an index on PostgreSQL (FerretDB plans)', async (t) => {
  const h = await harness(t, {}, { counted: true });
  await storeOldRequests(h, 3000);
  const agent = h.identity.person('agent');
  const group = h.identity.addGroup().id;
  await seed(h, agent.principal, [{ tags: ['vpn'] }, { priority: 'high' }, {}, {}]);
  const get = (url: string) => h.call(agent.principal, 'GET', url);
  // Each page is read an hour at a time: the hour's equality (and the filter's) pushed down as
  // GIN lookups, cursor pages included (the seek's condition sits beside them, not around
  // them); what is not pushed down (several values, ranges, a search) is checked on that hour.
  const filters = [
    '',
    'status=open,pending',
    'priority=high,low',
    'tags=vpn,printer',
    'q=printer',
    'createdAfter=2020-01-01T00:00:00Z&createdBefore=2040-01-01T00:00:00Z',
    'status=open',
    'priority=high',
    'status=open&priority=high',
    `assignedTo=${agent.user.id}`,
    `groupId=${group}`,
    `requester=${agent.user.id}`,
    'tags=vpn',
    'status=open&q=printer',
    'status=open&createdAfter=2020-01-01T00:00:00Z',
  ];
  const queries = await listQueriesOf(h.conn, 'requests', async () => {
    for (const f of filters)
      for (const s of ['', 'sort=-priority', 'sort=updatedAt', 'sort=-updatedAt']) {
        const query = [f, s, 'limit=1'].filter(Boolean).join('&');
        const first = await get(`/v1/requests?${query}`);
        t.equal(first.status, 200, query, { error: first.body.error });
        const next = first.body.data.pagination.nextCursor;
        if (next) t.equal((await get(`/v1/requests?${query}&cursor=${next}`)).status, 200);
      }
  });
  // A walk sends one query per hour or day: PostgreSQL's plans of the first few of each shape
  // (the same query but for the hour or day and the seek's values) tell as much as all of them.
  const shapes = new Map<string, number>();
  const shapeOf = (q: unknown) =>
    JSON.stringify(q, (_, v) => (typeof v === 'string' && /^\d{4}-\d\d-\d\d/.test(v) ? 'time' : v));
  const sample = queries.filter((q) => {
    const shape = shapeOf({ ...q.filter, skip: q.skip });
    shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    return shapes.get(shape)! <= 4;
  });
  t.comment(`${queries.length} queries, ${shapes.size} shapes`);
  await checkIndexedPlans(t, h.conn, 'requests', sample, filters.length * 3);
});

t.test('a total past 1,000 is capped and says so; the pages past it are still there', async (t) => {
  const h = await harness(t, {}, { counted: true });
  await storeOldRequests(h, 1100);
  const end = h.clock.now().getTime();
  const agent = h.identity.person('agent');
  await seed(h, agent.principal, [{}]);
  const get = (url: string) => h.call(agent.principal, 'GET', url);
  const capped = await get('/v1/requests?status=closed&limit=20');
  t.same(
    { ...capped.body.data.pagination, nextCursor: typeof capped.body.data.pagination.nextCursor },
    { page: 1, limit: 20, total: 1000, pages: 50, totalCapped: true, nextCursor: 'string' },
  );
  const past = await get('/v1/requests?status=closed&limit=20&page=52');
  t.equal(past.body.data.requests.length, 20, 'a page past the capped total');
  t.type(past.body.data.pagination.nextCursor, 'string', 'with a way on');
  const small = (await get('/v1/requests?status=open')).body.data.pagination;
  t.same([small.total, small.totalCapped], [1, undefined], 'a total under the cap is exact, no flag');
  // The old requests are one a minute up to 09:00: at 1,000 matching exactly, at 1,001 capped.
  const from = (n: number) => new Date(end - n * MINUTE).toISOString();
  const at = (await get(`/v1/requests?status=closed&createdAfter=${from(1000)}`)).body.data.pagination;
  t.same([at.total, at.totalCapped], [1000, undefined], 'exactly 1,000: exact, no flag');
  const over = (await get(`/v1/requests?status=closed&createdAfter=${from(1001)}`)).body.data.pagination;
  t.same([over.total, over.totalCapped], [1000, true], '1,001: capped');

  // 540 of them on the newest day, 560 the day before: a day that holds hundreds is read by its
  // hours (each find decodes an hour, not the day), in order across them.
  const queries = await listQueriesOf(h.conn, 'requests', async () => {
    const deep = await get('/v1/requests?status=closed&limit=20&page=28');
    t.same(
      deep.body.data.requests.map((r: { title: string }) => r.title),
      Array.from({ length: 20 }, (_, k) => `Old request ${559 - k}`),
      'the page past the first day, from its newest',
    );
  });
  t.same(
    queries.filter((q) => 'createdDay' in q.filter).map((q) => q.filter.createdDay),
    [],
    'no find reads a whole busy day',
  );

  // Several statuses: an equality each (pushed down by the local store), merged in list order.
  const several = await listQueriesOf(h.conn, 'requests', async () => {
    const both = await get('/v1/requests?status=closed,open&limit=5');
    t.same(
      both.body.data.requests.map((r: { status: string }) => r.status),
      ['open', 'closed', 'closed', 'closed', 'closed'],
      'the newest of either status first',
    );
    t.same(
      [both.body.data.pagination.total, both.body.data.pagination.totalCapped],
      [1000, true],
      'counted over both',
    );
    const titles = (await get('/v1/requests?status=closed,open&limit=3&page=2')).body.data.requests.map(
      (r: { title: string }) => r.title,
    );
    t.same(titles, ['Old request 1097', 'Old request 1096', 'Old request 1095'], 'a later page');
  });
  t.same(
    several.filter((q) => typeof q.filter.status !== 'string').map((q) => q.filter.status),
    [],
    'no $in on status',
  );
});

t.test(
  "a page's count reads a bounded span past the page: exact within it, a lower bound past it",
  async (t) => {
    const h = await harness(t, {}, { counted: true });
    const agent = h.identity.person('agent');
    const DAY = 24 * HOUR;
    const ids: string[] = [];
    for (let d = 0; d < 12; d++) {
      ids.push(...(await seed(h, agent.principal, [{ title: `Day ${d}` }])));
      h.clock.advance(DAY);
    }
    const mine = (extra: string) =>
      h.call(agent.principal, 'GET', `/v1/requests?requester=${agent.user.id}${extra}`);
    const whole = (await mine('&limit=20')).body.data.pagination;
    t.same([whole.total, whole.totalCapped], [12, undefined], 'counted while the page was read: exact');
    // One a day: the page is full at once, and the count goes on for a few days only.
    let short: Record<string, any> = {};
    const counted = await countsOf(h, async () => {
      short = (await mine('&limit=1')).body.data.pagination;
    });
    t.ok(counted > 0, `counted (${counted} counts)`);
    t.ok(short.total > 1 && short.total < 12, `a lower bound (${short.total})`);
    t.equal(short.totalCapped, true, 'says so');
    t.type(short.nextCursor, 'string', 'with a way on');
    // The lower bound is kept for the filter (LIST_TOTAL_CACHE_MS): the same page counts nothing.
    const counts = await countsOf(h, async () => {
      const again = (await mine('&limit=1')).body.data.pagination;
      t.same([again.total, again.totalCapped], [short.total, true], 'the same lower bound again');
    });
    t.equal(counts, 0, 'without a count');
    const last = await mine('&limit=1&page=12');
    t.same(idsOf(last.body), [ids[0]], 'the pages past the bound still answer');
    t.same(
      [last.body.data.pagination.total, last.body.data.pagination.totalCapped],
      [12, true],
      'a page past the kept bound raises it',
    );
    // An exact count is never kept: a new request is in the next total at once.
    await seed(h, agent.principal, [{ title: 'Day 12' }]);
    const grown = (await mine('&limit=20')).body.data.pagination;
    t.same([grown.total, grown.totalCapped], [13, undefined], 'the exact count, fresh');
  },
);

t.test('a list call reads a bounded span of hours and days; its cursor goes on from there', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const other = h.identity.person('agent');
  const DAY = 24 * HOUR;
  const [old] = await seed(h, agent.principal, [{ title: 'Long ago' }]);
  h.clock.advance(60 * DAY);
  const [recent] = await seed(h, agent.principal, [{ title: 'Two months on' }]);
  h.clock.advance(140 * DAY);
  await seed(h, other.principal, [{ title: 'Someone else' }]);
  const mine = (extra = '') =>
    h.call(agent.principal, 'GET', `/v1/requests?requester=${agent.user.id}${extra}`);

  // The newest day hour by hour, then a day at a time: 140 quiet days are more than one call reads.
  const first = await mine();
  t.same(idsOf(first.body), [], 'nothing in the span one call reads');
  const p = first.body.data.pagination;
  t.same(
    { ...p, nextCursor: typeof p.nextCursor },
    {
      page: 1,
      limit: 20,
      total: 0,
      pages: 0,
      totalCapped: true,
      nextCursor: 'string',
    },
    'the count is a lower bound, and the answer says where to go on',
  );
  const second = await mine(`&cursor=${p.nextCursor}`);
  t.same(idsOf(second.body), [recent, old], 'the next call goes on from where the first stopped');
  t.same(
    [second.body.data.pagination.hasMore, second.body.data.pagination.nextCursor],
    [false, null],
    'the end',
  );

  // Oldest first: from the first request's hour, the quiet days come after what it finds.
  const ascending = await mine('&sort=createdAt&limit=1');
  t.same(idsOf(ascending.body), [old]);
  const on = await mine(`&sort=createdAt&limit=1&cursor=${ascending.body.data.pagination.nextCursor}`);
  t.same(idsOf(on.body), [recent], 'sixty quiet days within one call');
});

t.test(
  'hours without a match: one probe passes over the rest of their day, or the hours go on',
  async (t) => {
    const h = await harness(t, {}, { counted: true });
    const [quiet, busy, other] = [1, 2, 3].map(() => h.identity.person('agent'));
    const DAY = 24 * HOUR;
    const [quietYesterday] = await seed(h, quiet.principal, [{ title: 'Quiet, yesterday' }]);
    const [busyYesterday] = await seed(h, busy.principal, [{ title: 'Busy, yesterday' }]);
    h.clock.advance(DAY - 6 * HOUR); // the next day, 03:00
    const [busyEarly] = await seed(h, busy.principal, [{ title: 'Busy, early today' }]);
    h.clock.advance(17 * HOUR); // 20:00: the newest request is someone else's
    await seed(h, other.principal, [{ title: 'Someone else, now' }]);
    /** A list of one requester's, and the store commands it sent to the requests collection. */
    const listOf = async (who: typeof quiet) => {
      const { result, commands } = await commandsOf(h.conn, () =>
        h.call(who.principal, 'GET', `/v1/requests?requester=${who.user.id}`),
      );
      const lookups = commands.filter(
        (c) => (c.name === 'find' || c.name === 'aggregate') && Object.values(c.command)[0] === 'requests',
      );
      return { body: result.body as Body, lookups: lookups.length };
    };

    const quietList = await listOf(quiet);
    t.same(idsOf(quietList.body), [quietYesterday], 'the day before is found');
    t.same(
      [quietList.body.data.pagination.total, quietList.body.data.pagination.totalCapped],
      [1, undefined],
    );
    // 20:00 (nothing), the probe of 00:00-20:00 (nothing), the day before: not an hour a lookup.
    t.ok(
      quietList.lookups <= 6,
      `a lookup for the empty hour, one for the rest of its day (${quietList.lookups})`,
    );

    const busyList = await listOf(busy);
    t.same(idsOf(busyList.body), [busyEarly, busyYesterday], 'the probe found a match: its hours are read');
    t.same([busyList.body.data.pagination.total, busyList.body.data.pagination.totalCapped], [2, undefined]);
  },
);
