import { eventually } from '@support-desk/platform/testing';
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
