// Lists that scale, through the gateway (issue 17): cursor pages followed by their Link headers,
// sort, multi-value filters, requester and tags filters, search (`q`, alias `search`) on requests,
// the requests changes feed with tombstones, and the users and group members lists.
import t from 'tap';
import { cast } from '../src/actors.js';
import { expectError, expectOk } from '../src/expect.js';
import type { Api, HttpResponse, Json } from '../src/http.js';
import { startStack, uniqueRun } from '../src/stack.js';
import { createGroup, createRequest, createUser } from '../src/world.js';

// The changes feed serves a change once it is CHANGES_SETTLE_MS old: the suite's stacks set 0,
// so the test sees its writes at once (SHARED_STACK_ENV).
const stack = await startStack(t);
const { admin, agent, viewer } = await cast(stack);

/** The `rel="next"` URI of a Link header (relative, as the API sends it), or null. */
function nextLink(res: HttpResponse): string | null {
  const header = String(res.headers.link ?? '');
  const match = /<([^>]+)>;\s*rel="next"/.exec(header);
  return match ? match[1]! : null;
}

/** Every item of a list, following `Link: rel="next"` from `path` (at most `maxPages` pages). */
async function followLinks(api: Api, path: string, key: string, maxPages = 20) {
  const items: Json[] = [];
  const responses: HttpResponse[] = [];
  let next: string | null = path;
  for (let n = 0; n < maxPages && next; n++) {
    const res = await api.get(next);
    if (res.status !== 200) throw new Error(`${next}: ${res.status} ${res.text.slice(0, 200)}`);
    responses.push(res);
    items.push(...res.json.data[key]);
    next = nextLink(res);
  }
  return { items, responses, ended: next === null };
}

t.test('requests: cursor pages by Link header, sort, multi-value filters, search', async (t) => {
  const run = uniqueRun('lists');
  const priorities = ['low', 'critical', 'medium', 'high', 'critical', 'low', 'high'];
  const ids: string[] = [];
  for (const [n, priority] of priorities.entries())
    ids.push(
      (await createRequest(t, agent.api, { title: `List ${run} ${n}`, priority, tags: [`t-${run}`] })).id,
    );

  const first = await agent.api.get(`/v1/requests?q=${run}&limit=3`);
  const firstData = expectOk(t, first, 200, 'page mode');
  t.equal(firstData?.pagination?.total, 7);
  t.type(firstData?.pagination?.nextCursor, 'string', 'page mode offers a cursor');
  const cursor = firstData.pagination.nextCursor as string;
  const viaCursor = await followLinks(
    agent.api,
    `/v1/requests?q=${run}&limit=3&cursor=${cursor}`,
    'requests',
  );
  t.ok(viaCursor.ended, 'the links end');
  t.same(
    [...firstData.requests, ...viaCursor.items].map((r: Json) => r.id),
    [...ids].reverse(),
    'page 1, then cursor pages: every request once, newest first',
  );
  t.notOk('total' in viaCursor.responses[0]!.json.data.pagination, 'cursor mode counts nothing');
  t.match(String(viaCursor.responses[0]!.headers.link), /rel="prev"/, 'a prev link too');

  const bySeverity = expectOk(t, await agent.api.get(`/v1/requests?q=${run}&sort=-priority`), 200, 'sort');
  t.same(
    bySeverity?.requests?.map((r: Json) => r.priority),
    ['critical', 'critical', 'high', 'high', 'medium', 'low', 'low'],
    'by severity, not alphabetically',
  );
  const urgent = expectOk(
    t,
    await agent.api.get(`/v1/requests?q=${run}&priority=critical,high`),
    200,
    'multi',
  );
  t.equal(urgent?.requests?.length, 4, 'priority=critical,high');
  const byTag = expectOk(t, await agent.api.get(`/v1/requests?q=T-${run.toUpperCase()}`), 200, 'tag search');
  t.equal(byTag?.requests?.length, 7, 'q matches tags, case-insensitively');

  const badStatus = await agent.api.get('/v1/requests?status=open,nope');
  expectError(t, badStatus, 400, 'VALIDATION_ERROR', 'unknown status value');
  t.match(badStatus.json?.error?.details?.[0], { field: 'query.status', message: /open, assigned/ });
  const badCursor = await agent.api.get(`/v1/requests?q=other&cursor=${cursor}`);
  expectError(t, badCursor, 400, 'VALIDATION_ERROR', 'a cursor used with other filters');
  t.equal(badCursor.json?.error?.details?.[0]?.field, 'query.cursor');
  expectError(
    t,
    await agent.api.get(`/v1/requests?page=2&cursor=${cursor}`),
    400,
    'VALIDATION_ERROR',
    'page+cursor',
  );
  expectError(t, await agent.api.get('/v1/requests?sort=title'), 400, 'VALIDATION_ERROR', 'unknown sort');
});

t.test('requests: requester and tags filters; `search` as the alias of `q`', async (t) => {
  const run = uniqueRun('who');
  const [mine, theirs, both] = [
    await createRequest(t, agent.api, { title: `Who ${run} a`, tags: [`vpn-${run}`] }),
    await createRequest(t, admin.api, { title: `Who ${run} b`, tags: [`printer-${run}`] }),
    await createRequest(t, admin.api, { title: `Who ${run} c`, tags: [`vpn-${run}`, `printer-${run}`] }),
  ];
  const ids = async (query: string) =>
    (expectOk(t, await viewer.api.get(`/v1/requests?${query}`), 200, query)?.requests ?? []).map(
      (r: Json) => r.id,
    );
  t.same(await ids(`q=${run}&requester=${agent.id}`), [mine.id], 'requester: raised by this user');
  t.same(await ids(`requester=${admin.id}&tags=printer-${run}`), [both.id, theirs.id], 'with a tag');
  t.same(await ids(`tags=vpn-${run}`), [both.id, mine.id], 'one tag');
  t.same(await ids(`tags=vpn-${run},printer-${run}`), [both.id, theirs.id, mine.id], 'any of several tags');
  t.same(await ids(`search=${run}&requester=${agent.id}`), [mine.id], '`search` is `q`');
  const bad = await viewer.api.get('/v1/requests?requester=alice');
  expectError(t, bad, 400, 'VALIDATION_ERROR', 'a requester that is no user id');
  t.match(bad.json?.error?.message, /^query\.requester /);
  const badTags = await viewer.api.get('/v1/requests?tags=a,,b');
  expectError(t, badTags, 400, 'VALIDATION_ERROR', 'an empty tag');
  t.match(badTags.json?.error?.message, /^query\.tags /);
  const both2 = await viewer.api.get(`/v1/requests?q=${run}&search=other`);
  expectError(t, both2, 400, 'VALIDATION_ERROR', 'q and search disagree');
  t.equal(both2.json?.error?.details?.[0]?.field, 'query.search');
  const users = expectOk(t, await admin.api.get(`/v1/users?q=${agent.email}`), 200, 'users: q');
  t.same(
    users?.users?.map((u: Json) => u.id),
    [agent.id],
    'the users list takes `q` too',
  );
});

t.test(
  'requests changes feed: mirror from the start, then poll; tombstones; internal notes by role',
  async (t) => {
    const run = uniqueRun('feed');
    const a = await createRequest(t, agent.api, { title: `Feed ${run} a` });
    const b = await createRequest(t, agent.api, { title: `Feed ${run} b` });
    expectOk(
      t,
      await agent.api.post(`/v1/requests/${a.id}/comments`, { content: 'note', isInternal: true }),
      201,
      'note',
    );

    /** Reads the feed from `cursor` until it has nothing more now; the mirror and the next cursor. */
    async function drain(api: Api, mirror: Map<string, Json>, cursor?: string) {
      let next = cursor;
      for (let n = 0; n < 200; n++) {
        const res = await api.get(`/v1/requests/changes?limit=100${next ? `&cursor=${next}` : ''}`);
        const data = expectOk(t, res, 200, 'changes');
        for (const change of data.changes) {
          if (change.deleted) mirror.delete(change.id);
          else mirror.set(change.id, change.request);
        }
        next = data.pagination.nextCursor;
        t.ok(nextLink(res)?.includes(`cursor=${next}`) ?? false, 'the next poll is in the Link header');
        if (!data.pagination.hasMore) return next!;
      }
      throw new Error('the feed did not end');
    }
    const viewerMirror = new Map<string, Json>();
    const agentMirror = new Map<string, Json>();
    const viewerCursor = await drain(viewer.api, viewerMirror);
    await drain(agent.api, agentMirror);
    t.equal(viewerMirror.get(b.id)?.title, `Feed ${run} b`, 'the mirror has the requests');
    t.same(viewerMirror.get(a.id)?.comments, [], 'a viewer mirrors no internal notes');
    t.equal(agentMirror.get(a.id)?.comments?.length, 1, 'an agent does');

    expectOk(t, await agent.api.patch(`/v1/requests/${b.id}`, { title: `Feed ${run} b2` }), 200, 'change b');
    expectOk(t, await admin.api.delete(`/v1/requests/${a.id}`), 200, 'delete a');
    const polled = await viewer.api.get(`/v1/requests/changes?cursor=${viewerCursor}`);
    const changes = expectOk(t, polled, 200, 'poll')?.changes ?? [];
    t.same(
      changes.map((c: Json) =>
        c.deleted ? { id: c.id, deleted: true } : { id: c.id, title: c.request.title },
      ),
      [
        { id: b.id, title: `Feed ${run} b2` },
        { id: a.id, deleted: true },
      ],
      'the change and the tombstone, in change order',
    );
    await drain(viewer.api, viewerMirror, viewerCursor);
    t.notOk(viewerMirror.has(a.id), 'the deleted request left the mirror');
    expectError(
      t,
      await viewer.api.get('/v1/requests/changes?cursor=bogus'),
      400,
      'VALIDATION_ERROR',
      'bad cursor',
    );
  },
);

t.test('users and group members: cursors by Link header, sort, multi-value filters', async (t) => {
  const run = uniqueRun('people');
  const group = await createGroup(t, admin.api);
  const names = ['Mia', 'ava', 'Zoe', 'liam', 'Noah'];
  const users: Json[] = [];
  for (const [n, name] of names.entries())
    users.push(
      await createUser(t, admin.api, {
        email: `${run}.${n}@example.com`,
        name,
        role: n % 2 ? 'agent' : 'viewer',
        groups: [group.id],
      }),
    );
  const walked = await followLinks(admin.api, `/v1/users?search=${run}&limit=2&sort=email`, 'users');
  t.ok(walked.ended);
  t.same(
    walked.items.map((u: Json) => u.id),
    users.map((u) => u.id),
    'page mode first page, then page links: by email',
  );
  const first = expectOk(t, await admin.api.get(`/v1/users?search=${run}&limit=2&sort=name`), 200, 'users');
  const rest = await followLinks(
    admin.api,
    `/v1/users?search=${run}&limit=2&sort=name&cursor=${first.pagination.nextCursor}`,
    'users',
  );
  t.same(
    [...first.users, ...rest.items].map((u: Json) => u.name),
    ['Mia', 'Noah', 'Zoe', 'ava', 'liam'],
    'by name (code points), across cursor pages',
  );
  const agents = expectOk(
    t,
    await admin.api.get(`/v1/users?search=${run}&role=agent,admin`),
    200,
    'role=agent,admin',
  );
  t.equal(agents?.users?.length, 2);
  expectError(t, await admin.api.get('/v1/users?role=boss'), 400, 'VALIDATION_ERROR', 'unknown role');

  const members = await followLinks(
    agent.api,
    `/v1/groups/${group.id}/members?limit=2&sort=-name&role=viewer`,
    'users',
  );
  t.same(
    members.items.map((u: Json) => u.name),
    ['Zoe', 'Noah', 'Mia'],
    'members: filtered, sorted, paged by links',
  );
});
