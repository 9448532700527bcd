import { BULK_JOB_MAX_ITEMS } from '@support-desk/contracts';
import t from 'tap';
import { itemKey } from '../src/store/bulk-jobs.js';
import { deleteRequest, updateRequest } from '../src/use-cases/requests.js';
import { HOUR, harness, type Harness, MINUTE, validBody } from './helpers.js';

type Who = Parameters<Harness['call']>[0];

const create = async (h: Harness, who: Who, n: number) => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await h.call(who, 'POST', '/v1/requests', validBody({ title: `Bulk ${i}` }))).body.data.id);
  return ids;
};

/** Runs the worker until the job is completed (bounded), then reads the job whole. */
async function finished(h: Harness, who: Who, jobId: string) {
  for (let pass = 0; pass < 20; pass++) {
    await h.bulkWorker.runNow();
    const job = await h.call(who, 'GET', `/v1/jobs/${jobId}?limit=100`);
    if (job.body.data.status === 'completed') {
      await h.relay.idle();
      return job.body.data;
    }
  }
  throw new Error(`job ${jobId} did not complete`);
}

t.test('bulk update: each item as its single call, results in order, events per change', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const ids = await create(h, agent.principal, 6);
  // Item 3: deleted (404); item 4: a stale entity tag (412); item 5: closed, which an agent may
  // not reopen (409).
  await h.call(admin.principal, 'DELETE', `/v1/requests/${ids[3]}`);
  await h.call(agent.principal, 'PATCH', `/v1/requests/${ids[5]}`, { status: 'closed' });
  const current = await h.call(agent.principal, 'GET', `/v1/requests/${ids[2]}`);
  const items = ids.map((id, n) => ({
    id,
    ...(n === 2 ? { ifMatch: current.headers.etag as string } : {}),
    ...(n === 4 ? { ifMatch: '"99-stale"' } : {}),
  }));
  const started = await h.call(agent.principal, 'POST', '/v1/requests/bulk', {
    action: 'update',
    items,
    changes: { status: 'in_progress', priority: 'critical' },
  });
  t.equal(started.status, 202);
  t.match(started.body.data, { action: 'update', status: 'running', total: 6, completedAt: null });
  t.match(started.body.data.id, /^job_/);

  const job = await finished(h, agent.principal, started.body.data.id);
  t.match(job, { status: 'completed', total: 6, processed: 6, succeeded: 3, failed: 3 });
  t.same(
    job.results.map(
      (r: { index: number; status: string; httpStatus: number; error: { code: string } | null }) => [
        r.index,
        r.status,
        r.httpStatus,
        r.error?.code ?? null,
      ],
    ),
    [
      [0, 'succeeded', 200, null],
      [1, 'succeeded', 200, null],
      [2, 'succeeded', 200, null],
      [3, 'failed', 404, 'NOT_FOUND'],
      [4, 'failed', 412, 'PRECONDITION_FAILED'],
      [5, 'failed', 409, 'CONFLICT'],
    ],
  );
  t.same(job.pagination, { page: 1, limit: 100, total: 6, pages: 1 });
  const page2 = await h.call(agent.principal, 'GET', `/v1/jobs/${job.id}?limit=2&page=2`);
  t.same(
    page2.body.data.results.map((r: { index: number }) => r.index),
    [2, 3],
    'results are paged in item order',
  );
  for (const id of ids.slice(0, 3)) {
    const read = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
    t.match(read, { status: 'in_progress', priority: 'critical' });
    const events = (await h.events({ resourceId: id })).map((e) => e.type);
    t.same(events, ['request.created', 'request.priority_changed', 'request.status_changed'], id);
    const [changed] = await h.events({ resourceId: id, type: 'request.status_changed' });
    t.equal(changed!.actor.id, agent.user.id, "the job's caller is the actor");
  }
  t.equal((await h.call(agent.principal, 'GET', `/v1/requests/${ids[5]}`)).body.data.status, 'closed');

  // Another agent does not see the job; an admin does.
  const other = h.identity.person('agent');
  t.equal((await h.call(other.principal, 'GET', `/v1/jobs/${job.id}`)).status, 404);
  t.equal((await h.call(admin.principal, 'GET', `/v1/jobs/${job.id}`)).status, 200);
  t.equal((await h.call(agent.principal, 'GET', '/v1/jobs/job_00000000000000000000000000')).status, 404);
});

t.test('bulk: what the whole job is refused for, before any item', async (t) => {
  const h = await harness(t);
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const [id] = await create(h, agent.principal, 1);
  const post = (who: Who, body: unknown) => h.call(who, 'POST', '/v1/requests/bulk', body);
  const cases: [string, Who, unknown, number, string][] = [
    ['delete needs admin', agent.principal, { action: 'delete', items: [{ id }] }, 403, 'FORBIDDEN'],
    ['update needs changes', agent.principal, { action: 'update', items: [{ id }] }, 400, 'body.changes'],
    [
      'empty changes',
      agent.principal,
      { action: 'update', items: [{ id }], changes: {} },
      400,
      'body.changes',
    ],
    [
      'delete takes no changes',
      admin.principal,
      { action: 'delete', items: [{ id }], changes: { priority: 'low' } },
      400,
      'body.changes',
    ],
    [
      'each request once',
      agent.principal,
      { action: 'update', items: [{ id }, { id }], changes: { priority: 'low' } },
      400,
      'body.items.1.id',
    ],
    [
      `at most ${BULK_JOB_MAX_ITEMS}`,
      agent.principal,
      {
        action: 'update',
        items: Array.from({ length: BULK_JOB_MAX_ITEMS + 1 }, () => ({ id })),
        changes: { priority: 'low' },
      },
      400,
      'items',
    ],
    [
      'no items',
      agent.principal,
      { action: 'update', items: [], changes: { priority: 'low' } },
      400,
      'items',
    ],
    ['unknown action', agent.principal, { action: 'explode', items: [{ id }] }, 400, 'action'],
  ];
  for (const [what, who, body, status, says] of cases) {
    const res = await post(who, body);
    t.equal(res.status, status, what);
    t.match(JSON.stringify(res.body.error), says, what);
  }
  t.equal(await h.conn.db!.collection('bulk_jobs').countDocuments(), 0, 'no job stored');
});

t.test('bulk: an item whose change landed before its result was recorded is not applied again', async (t) => {
  const h = await harness(t);
  const admin = h.identity.person('admin');
  const ids = await create(h, admin.principal, 3);
  const etag = (await h.call(admin.principal, 'GET', `/v1/requests/${ids[0]}`)).headers.etag as string;
  const update = await h.call(admin.principal, 'POST', '/v1/requests/bulk', {
    action: 'update',
    items: [{ id: ids[0], ifMatch: etag }],
    changes: { status: 'resolved', resolution: 'Done in bulk' },
  });
  const remove = await h.call(admin.principal, 'POST', '/v1/requests/bulk', {
    action: 'delete',
    items: ids.slice(1).map((id) => ({ id })),
  });
  const [updateJob, deleteJob] = [update.body.data.id, remove.body.data.id];
  // What a worker killed between an item's write and its result leaves: the change (with the
  // item's key) and no result. Both jobs may already be running: drop their results first.
  await h.bulkWorker.stop();
  await h.conn.db!.collection('bulk_job_results').deleteMany({});
  await h.conn.db!.collection('bulk_jobs').updateMany({}, { $set: { status: 'running', completedAt: null } });
  const landed = async (id: string) => (await h.call(admin.principal, 'GET', `/v1/requests/${id}`)).status;
  if (
    (await landed(ids[0]!)) === 200 &&
    (await h.events({ resourceId: ids[0], type: 'request.status_changed' })).length === 0
  )
    await updateRequest(
      h.deps,
      admin.principal,
      ids[0]!,
      { status: 'resolved', resolution: 'Done in bulk' },
      undefined,
      itemKey(updateJob, 0),
    );
  if ((await landed(ids[1]!)) === 200)
    await deleteRequest(h.deps, admin.principal, ids[1]!, undefined, itemKey(deleteJob, 0));
  await h.relay.idle();

  const updated = await finished(h, admin.principal, updateJob);
  t.match(
    updated.results,
    [{ index: 0, status: 'succeeded', httpStatus: 200 }],
    'not a 412 on its own write',
  );
  const deleted = await finished(h, admin.principal, deleteJob);
  t.match(
    deleted.results,
    [
      { index: 0, status: 'succeeded', httpStatus: 200 },
      { index: 1, status: 'succeeded', httpStatus: 200 },
    ],
    'not a 404 on its own delete',
  );
  t.equal((await h.events({ resourceId: ids[0], type: 'request.status_changed' })).length, 1, 'one change');
  t.equal((await h.events({ resourceId: ids[1], type: 'request.deleted' })).length, 1, 'one delete');
  t.equal((await h.events({ resourceId: ids[2], type: 'request.deleted' })).length, 1);
});

t.test('a completed job and its results are kept for the retention, then deleted', async (t) => {
  const h = await harness(t, { BULK_JOB_RETENTION_DAYS: 7 });
  const agent = h.identity.person('agent');
  const ids = await create(h, agent.principal, 2);
  const bulk = () =>
    h.call(agent.principal, 'POST', '/v1/requests/bulk', {
      action: 'update',
      items: ids.map((id) => ({ id })),
      changes: { priority: 'high' },
    });
  const first = await finished(h, agent.principal, (await bulk()).body.data.id);
  h.clock.advance(72 * HOUR);
  const second = await finished(h, agent.principal, (await bulk()).body.data.id);
  const results = (jobId: string) => h.conn.collection('bulk_job_results').countDocuments({ jobId });
  t.equal(await results(first.id), 2);

  h.clock.advance(4 * 24 * HOUR - MINUTE);
  t.equal(await h.bulkJobsPurge.runNow(), 0, 'a minute before the first job expires: nothing');
  t.equal((await h.call(agent.principal, 'GET', `/v1/jobs/${first.id}`)).status, 200);

  h.clock.advance(2 * MINUTE);
  t.equal(await h.bulkJobsPurge.runNow(), 1, 'seven days after it completed: the first job');
  t.equal((await h.call(agent.principal, 'GET', `/v1/jobs/${first.id}`)).status, 404);
  t.equal(await results(first.id), 0, 'its results went with it');
  t.equal((await h.call(agent.principal, 'GET', `/v1/jobs/${second.id}`)).status, 200, 'the later one stays');
  t.equal(await results(second.id), 2);

  h.clock.advance(72 * HOUR);
  t.equal(await h.bulkJobsPurge.runNow(), 1);
  t.equal((await h.call(agent.principal, 'GET', `/v1/jobs/${second.id}`)).status, 404);
  t.equal(await results(second.id), 0);
  t.same(
    (await h.call(agent.principal, 'GET', `/v1/requests/${ids[0]}`)).body.data.priority,
    'high',
    'the changes the jobs made stay',
  );
});
