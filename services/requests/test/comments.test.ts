import { fixtures } from '@support-desk/contracts/fixtures';
import { deadLetterStore } from '@support-desk/platform/messaging';
import { eventually, publishEvent } from '@support-desk/platform/testing';
import t from 'tap';
import { harness, validBody } from './helpers.js';

t.test('comments, internal notes and who may comment', async (t) => {
  const h = await harness(t);
  const requester = h.identity.person('agent');
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const id = (await h.call(requester.principal, 'POST', '/v1/requests', validBody())).body.data.id;
  const url = `/v1/requests/${id}/comments`;

  const pub = await h.call(agent.principal, 'POST', url, { content: 'Looking into it' });
  t.equal(pub.status, 201);
  t.same(Object.keys(pub.body.data).sort(), ['author', 'content', 'createdAt', 'id', 'isInternal']);
  t.same(pub.body.data.author, { id: agent.user.id, name: agent.user.name });
  t.equal(pub.body.data.isInternal, false);
  t.match(pub.body.data.id, /^cmt_/);
  const note = await h.call(agent.principal, 'POST', url, {
    content: 'Secret: user broke it',
    isInternal: true,
  });
  t.equal(note.status, 201);
  t.equal(note.body.data.isInternal, true);

  t.equal(
    (await h.call(viewer.principal, 'POST', url, { content: 'me too' })).status,
    403,
    'viewer cannot comment',
  );
  for (const body of [
    {},
    { content: '' },
    { content: '  ' },
    { content: 'x', isInternal: 'maybe' },
    { content: 'x', extra: 1 },
  ]) {
    const res = await h.call(agent.principal, 'POST', url, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error.message, /^body\./);
  }
  t.equal(
    (
      await h.call(agent.principal, 'POST', '/v1/requests/req_0000000000aaaaaaaaaaaaaaaa/comments', {
        content: 'x',
      })
    ).status,
    404,
  );

  const asAgent = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.equal(asAgent.comments.length, 2, 'agents see internal notes');
  const asViewer = (await h.call(viewer.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.same(
    asViewer.comments.map((c: { content: string }) => c.content),
    ['Looking into it'],
    'viewers never see them',
  );
  t.notMatch(JSON.stringify(asViewer), /Secret/);

  const events = await h.events({ resourceId: id, type: 'request.comment_added' });
  t.equal(events.length, 2);
  t.equal((events[0].changes?.comment?.to as { content?: string } | undefined)?.content, 'Looking into it');
  t.same(events[1].changes?.comment?.to, {
    id: note.body.data.id,
    authorId: agent.user.id,
    isInternal: true,
  });
  t.notMatch(JSON.stringify(events[1]), /Secret/, 'internal content never leaves in events');
});

t.test('first response: public reply by an agent other than the requester', async (t) => {
  const h = await harness(t);
  const requester = h.identity.person('agent');
  const agent = h.identity.person('agent');
  const id = (await h.call(requester.principal, 'POST', '/v1/requests', validBody())).body.data.id;
  const url = `/v1/requests/${id}/comments`;
  const status = async () =>
    (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data.sla.responseStatus;
  await h.call(requester.principal, 'POST', url, { content: 'any news?' });
  t.equal(await status(), 'on_track', "the requester's own comment is not a response");
  await h.call(agent.principal, 'POST', url, { content: 'note', isInternal: true });
  t.equal(await status(), 'on_track', 'an internal note is not a response');
  h.clock.advance(60_000);
  await h.call(agent.principal, 'POST', url, { content: 'On it' });
  t.equal(await status(), 'met');
});

t.test('read model follows identity events; unknown ids asked once over RPC', async (t) => {
  // The service's own read-model consumer (started with it) applies identity's events.
  const h = await harness(t);
  const requester = h.identity.person('viewer');
  const agent = h.identity.person('agent');
  const group = h.identity.addGroup('Network');
  const creator = h.identity.person('agent');
  const id = (
    await h.call(
      creator.principal,
      'POST',
      '/v1/requests',
      validBody({ assignedTo: agent.user.id, assignedGroup: group.id }),
    )
  ).body.data.id;
  const calls = h.identity.calls.getUser;
  await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.equal(h.identity.calls.getUser, calls, 'reads use the read model, no RPC');

  // identity changes the assignee's name and the group's name, and makes the creator VIP.
  h.identity.users.set(agent.user.id, { ...agent.user, name: 'Renamed Agent', email: 'renamed@example.com' });
  await h.identity.publish('user.updated', agent.user.id, {
    name: { from: agent.user.name, to: 'Renamed Agent' },
  });
  h.identity.users.set(creator.user.id, { ...creator.user, isVip: true, name: 'Very Important' });
  await h.identity.publish('user.updated', creator.user.id, { isVip: { from: false, to: true } });
  h.identity.groups.set(group.id, { ...group, name: 'Networking' });
  await h.identity.publish('system.config_changed', group.id, {
    name: { from: 'Network', to: 'Networking' },
  });
  await h.identity.publish('user.login', requester.user.id);

  const read = await eventually(
    async () => {
      const d = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
      return d.assignedTo.name === 'Renamed Agent' &&
        d.assignedGroup.name === 'Networking' &&
        d.requester.isVip
        ? d
        : null;
    },
    { timeoutMs: 10_000, what: 'read model updated' },
  );
  t.same(read.assignedTo, { id: agent.user.id, email: 'renamed@example.com', name: 'Renamed Agent' });
  t.same(read.requester, {
    id: creator.user.id,
    email: creator.user.email,
    name: 'Very Important',
    isVip: true,
  });
  const list = (await h.call(agent.principal, 'GET', '/v1/requests')).body.data.requests;
  t.equal(list[0].requester.name, 'Very Important', 'list names follow identity too');

  // A deactivated user can no longer be assigned.
  h.identity.users.set(agent.user.id, { ...agent.user, status: 'inactive' });
  await h.identity.publish('user.deactivated', agent.user.id);
  await eventually(async () => (await h.deps.directory.user(agent.user.id))?.status === 'inactive', {
    what: 'deactivation applied',
  });
  const other = (await h.call(creator.principal, 'POST', '/v1/requests', validBody())).body.data.id;
  const res = await h.call(creator.principal, 'PATCH', `/v1/requests/${other}`, {
    assignedTo: agent.user.id,
  });
  t.equal(res.status, 400);
  t.match(res.body.error.message, /body\.assignedTo.*not active/);
});

t.test(
  'a request stops taking comments at its size budget, and can still be changed and deleted',
  async (t) => {
    const h = await harness(t, { REQUEST_DOCUMENT_MAX_BYTES: 128 * 1024 });
    const agent = h.identity.person('agent');
    const admin = h.identity.person('admin');
    const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;
    // 20,000 characters of a 4-byte character: the largest comment, 40 kB of UTF-8.
    const content = '😀'.repeat(10_000);
    const statuses: number[] = [];
    let refusal: { error: { code: string; message: string } } | undefined;
    for (let i = 0; i < 10 && !refusal; i++) {
      const res = await h.call(agent.principal, 'POST', `/v1/requests/${id}/comments`, { content });
      statuses.push(res.status);
      if (res.status !== 201) refusal = res.body;
    }
    t.same(
      statuses.slice(0, -1),
      statuses.slice(0, -1).map(() => 201),
      `${statuses.length - 1} comments landed`,
    );
    t.equal(statuses.at(-1), 409, 'then a clear refusal');
    t.match(refusal, { error: { code: 'CONFLICT', message: /request has reached its size limit/ } });
    const read = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
    t.equal(read.status, 200, 'the request is still readable');
    t.equal(read.body.data.comments.length, statuses.length - 1);
    const patched = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { status: 'in_progress' });
    t.equal(patched.status, 200, 'and can still change status');
    t.equal((await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`)).status, 200, 'and be deleted');
  },
);

t.test(
  'the read model reads user events of every version (frozen fixtures), dead-letters none',
  async (t) => {
    const h = await harness(t);
    const agent = h.identity.person('agent');
    const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;
    const versions = fixtures.events();
    for (const e of versions.future.filter((f) => !String(f.type).startsWith('user.'))) {
      await publishEvent(h.nc, h.names, e);
    }
    // Each version's user events in turn, the user renamed in identity first: the read model asks
    // identity again on an update or deactivation, so the read shows that version's name only
    // once one of its events was read.
    for (const version of ['v1', 'unversioned', 'future'] as const) {
      const userEvents = versions[version].filter((e) => String(e.type).startsWith('user.'));
      const kinds = new Set(userEvents.map((e) => String(e.type)));
      t.ok(
        kinds.has('user.updated') && kinds.has('user.deactivated'),
        `${version}: ${userEvents.length} user events, updates and deactivations among them`,
      );
      const renamed = `Renamed ${version}`;
      h.identity.users.set(agent.user.id, { ...agent.user, name: renamed });
      for (const e of userEvents) {
        // The fixture as published, about this test's user (its id is the only thing adapted).
        await publishEvent(h.nc, h.names, { ...e, resourceId: agent.user.id });
      }
      await eventually(
        async () =>
          (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data.requester.name === renamed,
        // A CI run beside the cluster test took more than the default 10 s for the last version.
        { what: `the ${version} events applied`, timeoutMs: 30_000 },
      );
    }
    t.pass('every event was read in turn');
    t.equal(await deadLetterStore(h.conn).model.countDocuments(), 0, 'nothing dead-lettered');
  },
);

t.test(
  'GET /v1/requests/:id/comments: paged, oldest first, internal notes for agents and admins',
  async (t) => {
    const h = await harness(t);
    const requester = h.identity.person('agent');
    const agent = h.identity.person('agent');
    const viewer = h.identity.person('viewer');
    const admin = h.identity.person('admin');
    const id = (await h.call(requester.principal, 'POST', '/v1/requests', validBody())).body.data.id;
    const url = `/v1/requests/${id}/comments`;
    const posted: string[] = [];
    for (const [n, isInternal] of [false, true, false, true, false].entries()) {
      const res = await h.call(agent.principal, 'POST', url, { content: `comment ${n}`, isInternal });
      posted.push(res.body.data.id);
      h.clock.advance(1000);
    }
    const ids = (res: { body: any }) => res.body.data.comments.map((c: { id: string }) => c.id);

    const first = await h.call(agent.principal, 'GET', `${url}?limit=2`);
    t.equal(first.status, 200);
    t.same(ids(first), [posted[0], posted[1]], 'oldest first, internal notes for an agent');
    t.same(
      { ...first.body.data.pagination, nextCursor: 'x' },
      { page: 1, limit: 2, total: 5, pages: 3, nextCursor: 'x' },
    );
    t.equal(first.headers.link, `<${url}?limit=2&page=2>; rel="next"`);
    const single = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
    t.same(first.body.data.comments, single.comments.slice(0, 2), 'each as the single read shows it');

    const second = await h.call(
      agent.principal,
      'GET',
      `${url}?limit=2&cursor=${first.body.data.pagination.nextCursor}`,
    );
    t.same(ids(second), [posted[2], posted[3]]);
    t.same(Object.keys(second.body.data.pagination).sort(), ['hasMore', 'limit', 'nextCursor', 'prevCursor']);
    const third = await h.call(
      agent.principal,
      'GET',
      `${url}?limit=2&cursor=${second.body.data.pagination.nextCursor}`,
    );
    t.same(ids(third), [posted[4]]);
    t.equal(third.body.data.pagination.hasMore, false);
    const back = await h.call(
      agent.principal,
      'GET',
      `${url}?limit=2&cursor=${third.body.data.pagination.prevCursor}`,
    );
    t.same(ids(back), [posted[2], posted[3]], 'and back');
    t.same(
      ids(await h.call(admin.principal, 'GET', `${url}?sort=-createdAt`)),
      [...posted].reverse(),
      'newest first',
    );

    const asViewer = await h.call(viewer.principal, 'GET', url);
    t.same(ids(asViewer), [posted[0], posted[2], posted[4]], 'a viewer never sees internal notes');
    t.equal(asViewer.body.data.pagination.total, 3, 'nor counts them');
    t.notMatch(JSON.stringify(asViewer.body), /comment [13]/);
    const viewerPage = await h.call(viewer.principal, 'GET', `${url}?limit=1`);
    const viewerNext = await h.call(
      viewer.principal,
      'GET',
      `${url}?limit=1&cursor=${viewerPage.body.data.pagination.nextCursor}`,
    );
    t.same(ids(viewerNext), [posted[2]], "a viewer's cursor passes over the notes");

    const other = (await h.call(requester.principal, 'POST', '/v1/requests', validBody())).body.data.id;
    const foreign = await h.call(
      agent.principal,
      'GET',
      `/v1/requests/${other}/comments?cursor=${first.body.data.pagination.nextCursor}`,
    );
    t.equal(foreign.status, 400, "another request's cursor");
    t.equal(foreign.body.error.details[0].field, 'query.cursor');
    t.same((await h.call(agent.principal, 'GET', `/v1/requests/${other}/comments`)).body.data.comments, []);
    for (const bad of ['?limit=0', '?sort=content', '?page=2&cursor=abc', '?extra=1']) {
      const res = await h.call(agent.principal, 'GET', `${url}${bad}`);
      t.equal(res.status, 400, bad);
    }
    t.equal(
      (await h.call(agent.principal, 'GET', '/v1/requests/req_0000000000aaaaaaaaaaaaaaaa/comments')).status,
      404,
    );
    await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
    t.equal((await h.call(agent.principal, 'GET', url)).status, 404, 'a deleted request has none to show');
  },
);
