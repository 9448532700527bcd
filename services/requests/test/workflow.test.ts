import { REQUEST_STATUSES, type RequestStatus } from '@support-desk/contracts';
import t from 'tap';
import { TRANSITIONS } from '../src/use-cases/workflow.js';
import { requestModel } from '../src/store/requests.js';
import { harness, validBody } from './helpers.js';

t.test('the whole transition table, allowed and refused', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const model = requestModel(h.conn);
  // Each case starts from a request forced into `from` (with an assignee so `assigned` is legal).
  const startIn = async (from: RequestStatus) => {
    const id = (
      await h.call(agent.principal, 'POST', '/v1/requests', validBody({ assignedTo: agent.user.id }))
    ).body.data.id;
    const stopped = from === 'resolved' || from === 'closed';
    await model.updateOne(
      { _id: id },
      { $set: { status: from, clockStoppedAt: stopped ? h.clock.now() : null } },
    );
    return id;
  };
  for (const from of REQUEST_STATUSES) {
    for (const to of REQUEST_STATUSES) {
      if (from === to) continue;
      const id = await startIn(from);
      const res = await h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, { status: to });
      const allowed = TRANSITIONS[from].includes(to) && !(from === 'closed' && to === 'in_progress');
      if (allowed) {
        t.equal(res.status, 200, `${from} → ${to} allowed`);
        t.equal(res.body.data.status, to);
      } else {
        t.equal(res.status, 409, `${from} → ${to} refused`);
        t.equal(res.body.error.code, 'CONFLICT');
        t.match(res.body.error.message, new RegExp(`from ${from} to ${to}`), 'names from and to');
        if (!TRANSITIONS[from].includes(to))
          t.match(
            res.body.error.message,
            `from ${from} a request can move to: ${TRANSITIONS[from][0]}`,
            'says which moves are allowed instead',
          );
      }
    }
  }
  const closed = await startIn('closed');
  const reopen = await h.call(admin.principal, 'PATCH', `/v1/requests/${closed}`, { status: 'in_progress' });
  t.equal(reopen.status, 200, 'an admin may reopen a closed request');
  const same = await h.call(agent.principal, 'PATCH', `/v1/requests/${closed}`, { status: 'in_progress' });
  t.equal(same.status, 200, 'moving to the current status is a no-op');
});

t.test('status side effects: events, resolution, reopen, implied moves', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;
  const patch = (body: Record<string, unknown>) =>
    h.call(agent.principal, 'PATCH', `/v1/requests/${id}`, body);

  t.equal((await patch({ status: 'assigned' })).status, 400, 'assigned needs an assignee');
  t.equal((await patch({ status: 'in_progress' })).body.data.status, 'in_progress');
  t.equal((await patch({ resolution: 'Replaced it' })).status, 400, 'resolution needs status resolved');
  h.clock.advance(60_000);
  const resolved = await patch({ status: 'resolved', resolution: 'Replaced the toner' });
  t.equal(resolved.status, 200);
  t.equal(resolved.body.data.updatedAt, h.clock.now().toISOString());
  let read = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.equal(read.resolution, 'Replaced the toner');
  t.equal(read.sla.resolutionStatus, 'met');

  h.clock.advance(3_600_000);
  t.equal((await patch({ status: 'in_progress' })).status, 200, 'reopen');
  read = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.notOk('resolution' in read, 'reopened: no resolution shown');
  t.equal(
    read.sla.resolutionTarget,
    new Date(Date.parse(read.createdAt) + 24 * 3_600_000 + 3_600_000).toISOString(),
    'the resolution clock resumes: time spent resolved is not counted',
  );
  t.equal(read.sla.resolutionStatus, 'on_track');

  const statusEvents = await h.events({ resourceId: id, type: 'request.status_changed' });
  t.same(
    statusEvents.map((e) => e.changes),
    [
      { status: { from: 'open', to: 'in_progress' } },
      {
        status: { from: 'in_progress', to: 'resolved' },
        resolution: { from: null, to: 'Replaced the toner' },
      },
      {
        status: { from: 'resolved', to: 'in_progress' },
        resolution: { from: 'Replaced the toner', to: null },
      },
    ],
  );

  // Unassigning an assigned request returns it to open.
  const other = (
    await h.call(agent.principal, 'POST', '/v1/requests', validBody({ assignedTo: agent.user.id }))
  ).body.data.id;
  const unassigned = await h.call(agent.principal, 'PATCH', `/v1/requests/${other}`, { assignedTo: null });
  t.equal(unassigned.body.data.status, 'open');
  const assigned = await h.events({ resourceId: other, type: 'request.assigned' });
  t.same(
    assigned.map((e) => e.changes),
    [{ assignedTo: { from: null, to: agent.user.id } }, { assignedTo: { from: agent.user.id, to: null } }],
  );
});
