import { hourKey } from '@support-desk/platform/core';
import { asCaller, checkIndexedPlans, listQueriesOf } from '@support-desk/platform/testing';
import t, { type Test } from 'tap';
import { BOUNDARY, HOUR, harness, type Harness, multipartBody, validBody } from './helpers.js';

const DAY = 24 * HOUR;

/** A request by `agent` with one comment and one attachment; its id and the attachment's. */
async function requestWithAttachment(t: Test, h: Harness, principal: Parameters<Harness['call']>[0]) {
  const id = (await h.call(principal, 'POST', '/v1/requests', validBody())).body.data.id as string;
  await h.call(principal, 'POST', `/v1/requests/${id}/comments`, { content: 'still on fire' });
  const res = await h.app.inject({
    method: 'POST',
    url: `/v1/requests/${id}/attachments`,
    headers: { ...asCaller(principal), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: multipartBody([
      { name: 'file', filename: 'smoke.txt', data: Buffer.from('smoke '.repeat(100)) },
    ]),
  });
  t.equal(res.statusCode, 201, 'attachment uploaded');
  await h.relay.idle();
  return { id, attachment: res.json().data.id as string };
}

t.test('trash: a deleted request is listed, restored whole, and announced', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin');
  const agent = h.identity.person('agent');
  const { id, attachment } = await requestWithAttachment(t, h, agent.principal);
  const deletedAt = h.clock.now();
  t.equal((await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`)).status, 200);
  t.equal((await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).status, 404, 'gone from reads');

  const trash = await h.call(admin.principal, 'GET', '/v1/requests/deleted');
  t.equal(trash.status, 200);
  t.same(trash.body.data.deleted, [
    {
      id,
      title: validBody().title,
      status: 'open',
      priority: 'high',
      requester: { id: agent.user.id, email: agent.principal.email, name: agent.principal.name },
      createdAt: deletedAt.toISOString(),
      deletedAt: deletedAt.toISOString(),
      deletedBy: admin.user.id,
      purgeAfter: new Date(deletedAt.getTime() + 30 * DAY).toISOString(),
      commentCount: 1,
      attachmentCount: 1,
    },
  ]);
  t.same(trash.body.data.pagination, { limit: 20, nextCursor: null, hasMore: false });
  t.equal((await h.call(agent.principal, 'GET', '/v1/requests/deleted')).status, 403, 'admins only');
  t.equal((await h.call(agent.principal, 'POST', `/v1/requests/${id}/restore`)).status, 403);

  h.clock.advance(HOUR);
  const restored = await h.call(admin.principal, 'POST', `/v1/requests/${id}/restore`);
  t.equal(restored.status, 200);
  t.equal(restored.body.data.id, id);
  t.equal(restored.body.data.comments.length, 1, 'comments restored');
  t.equal(restored.body.data.attachments[0].id, attachment, 'attachments restored');
  t.equal((await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).status, 200, 'readable again');
  const file = await h.call(agent.principal, 'GET', `/v1/attachments/${attachment}`);
  t.equal(file.status, 200, 'the bytes were kept');
  t.equal(file.body, 'smoke '.repeat(100));
  const listed = await h.call(agent.principal, 'GET', '/v1/requests?limit=100');
  t.ok(
    listed.body.data.requests.some((r: { id: string }) => r.id === id),
    'back in the list',
  );
  // Restoring moved its updatedAt: the lists by it find it where it now belongs, at the top.
  const byChange = await h.call(agent.principal, 'GET', '/v1/requests?sort=-updatedAt&limit=1');
  t.same(
    byChange.body.data.requests.map((r: { id: string }) => r.id),
    [id],
    'first in the list by the latest change',
  );
  t.same(
    (await h.call(admin.principal, 'GET', '/v1/requests/deleted')).body.data.deleted,
    [],
    'out of the trash',
  );

  const [event] = await h.events({ resourceId: id, type: 'request.restored' });
  t.match(event, {
    type: 'request.restored',
    actor: { id: admin.user.id },
    changes: { deletedAt: { from: deletedAt.toISOString(), to: null } },
    snapshot: { id, commentCount: 1, attachmentCount: 1 },
  });

  const again = await h.call(admin.principal, 'POST', `/v1/requests/${id}/restore`);
  t.equal(again.status, 409, 'a request that is not deleted cannot be restored');
  t.equal(again.body.error.code, 'CONFLICT');
  const unknown = await h.call(
    admin.principal,
    'POST',
    '/v1/requests/req_00000000000000000000000000/restore',
  );
  t.equal(unknown.status, 404);
  t.equal((await h.events({ resourceId: id, type: 'request.restored' })).length, 1, 'one event');
});

t.test('trash: pages newest deletion first by cursor; a bad cursor is a 400', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin');
  const ids: string[] = [];
  for (let n = 0; n < 3; n++) {
    const id = (await h.call(admin.principal, 'POST', '/v1/requests', validBody())).body.data.id as string;
    h.clock.advance(1000);
    await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
    ids.push(id);
  }
  const first = await h.call(admin.principal, 'GET', '/v1/requests/deleted?limit=2');
  t.same(
    first.body.data.deleted.map((d: { id: string }) => d.id),
    [ids[2], ids[1]],
  );
  t.equal(first.body.data.pagination.hasMore, true);
  t.match(first.headers.link, /rel="next"/);
  const second = await h.call(
    admin.principal,
    'GET',
    `/v1/requests/deleted?limit=2&cursor=${first.body.data.pagination.nextCursor}`,
  );
  t.same(
    second.body.data.deleted.map((d: { id: string }) => d.id),
    [ids[0]],
  );
  t.same(second.body.data.pagination, { limit: 2, nextCursor: null, hasMore: false });
  const bad = await h.call(admin.principal, 'GET', '/v1/requests/deleted?cursor=abc');
  t.equal(bad.status, 400);
  t.match(bad.body.error, { code: 'VALIDATION_ERROR' });
});

t.test('trash: purged for good after the period, bytes included, announced once', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin');
  const agent = h.identity.person('agent');
  const purge = () => h.trashPurge.runNow();
  const { id, attachment } = await requestWithAttachment(t, h, agent.principal);
  const kept = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id as string;
  await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
  const files = h.conn.db!.collection('attachments.files');
  const chunks = h.conn.db!.collection('attachments.chunks');

  // A pass before the period ends purges nothing (a full pass: the first of a process).
  h.clock.advance(30 * DAY - HOUR);
  t.equal(await purge(), 0, 'not yet');
  t.equal((await h.call(admin.principal, 'GET', '/v1/requests/deleted')).body.data.deleted.length, 1);

  // The next pass reads by hour of deletion: the period has ended.
  h.clock.advance(2 * HOUR);
  t.equal(await purge(), 1, 'purged');
  t.equal((await h.call(admin.principal, 'POST', `/v1/requests/${id}/restore`)).status, 404, 'gone for good');
  t.same((await h.call(admin.principal, 'GET', '/v1/requests/deleted')).body.data.deleted, []);
  t.equal(
    await h.conn.db!.collection('requests').countDocuments({ _id: id as never }),
    0,
    'document removed',
  );
  t.equal(await files.countDocuments({ _id: attachment as never }), 0, 'file removed');
  t.equal(await chunks.countDocuments({ files_id: attachment as never }), 0, 'bytes removed');
  t.equal((await h.call(agent.principal, 'GET', `/v1/requests/${kept}`)).status, 200, 'others untouched');
  t.equal(await purge(), 0, 'nothing left');

  const purged = await h.events({ resourceId: id, type: 'request.purged' });
  t.equal(purged.length, 1, 'announced once');
  t.match(purged[0], { actor: { role: 'system' }, changes: { purgedAt: { from: null } } });
});

t.test('the trash list and the purge by hour are read through an index on PostgreSQL', async (t) => {
  const h = await harness(t, {}, { counted: true });
  const admin = h.identity.person('admin');
  // Live rows enough that PostgreSQL plans as for a real table (a full read would be its choice
  // on a few rows), straight into the store.
  const at = new Date('2020-01-01T00:00:00Z');
  const live = Array.from({ length: 3000 }, (_, n) => ({
    _id: `req_live${n}`,
    title: `Live ${n}`,
    description: 'A live request. '.repeat(60),
    deletedAt: null,
    createdAt: at,
    updatedAt: at,
    rev: 0,
  }));
  for (let n = 0; n < live.length; n += 500)
    await h.conn.db!.collection('requests').insertMany(live.slice(n, n + 500) as never[]);
  for (let n = 0; n < 3; n++) {
    const id = (await h.call(admin.principal, 'POST', '/v1/requests', validBody())).body.data.id as string;
    await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
  }
  const queries = await listQueriesOf(h.conn, 'requests', async () => {
    const first = await h.call(admin.principal, 'GET', '/v1/requests/deleted?limit=1');
    const next = first.body.data.pagination.nextCursor;
    t.equal(
      (await h.call(admin.principal, 'GET', `/v1/requests/deleted?limit=1&cursor=${next}`)).status,
      200,
    );
    await h.deps.trash.dueForPurge(hourKey(h.clock.now()), h.clock.now(), 100);
  });
  await checkIndexedPlans(t, h.conn, 'requests', queries, 2);
});
