// The requests admin RPC (what the settings console and deskctl use), over the real NATS, through
// the one admin client in platform: every op answers what its HTTP route answers, refusals are
// worded as the HTTP API words them and change nothing, the admin is the events' actor.
import type { AdminActor, SlaTargets } from '@support-desk/contracts';
import { AppError } from '@support-desk/platform/core';
import {
  REQUESTS_NOT_ANSWERING,
  requestsAdminClient,
  RequestsUnavailableError,
} from '@support-desk/platform/clients';
import { testSigner } from '@support-desk/platform/testing';
import t from 'tap';
import { harness, validBody } from './helpers.js';

const console_: AdminActor = {
  userId: 'usr_01jconsoleadmin000000000',
  name: 'Console Admin',
  email: 'console-admin@example.com',
  via: 'console',
  ip: '203.0.113.9',
  userAgent: 'Mozilla/5.0 (test)',
  requestId: 'req-console-1',
};
const deskctl: AdminActor = { ...console_, via: 'deskctl', ip: null, userAgent: null, requestId: null };

/** What the settings console and deskctl run as: identity, which signs every request. */
const identity = testSigner('identity');

const targets = (firstResponseMinutes: number, resolutionMinutes: number) =>
  Object.fromEntries(
    ['critical', 'high', 'medium', 'low'].map((p) => [p, { firstResponseMinutes, resolutionMinutes }]),
  ) as SlaTargets;

/** The refusal a call ends in (it must be one). */
async function refusal(call: Promise<unknown>): Promise<AppError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

t.test('SLA policies: every op as the HTTP API answers it, the admin as the actor', async (t) => {
  const h = await harness(t);
  const rpc = requestsAdminClient(h.nc, h.names, identity);
  const admin = h.identity.person('admin').principal;

  const { policy } = await rpc.call(console_, 'slaPolicies.create', {
    name: 'rpc-office',
    targets: targets(60, 480),
  });
  t.match(policy, { name: 'rpc-office', position: 0, pauseStatuses: ['pending'] });
  const http = await h.call(admin, 'GET', `/v1/sla-policies/${policy.id}`);
  t.same(
    (await rpc.call(console_, 'slaPolicies.get', { id: policy.id })).policy,
    http.body.data,
    'as HTTP shows it',
  );
  const listed = await rpc.call(console_, 'slaPolicies.list', {});
  t.same(
    listed.policies.map((p) => p.id),
    [policy.id],
  );
  t.same(listed.fallback, (await h.call(admin, 'GET', '/v1/sla-policies')).body.data.fallback);

  const updated = await rpc.call(deskctl, 'slaPolicies.update', {
    id: policy.id,
    description: 'nine to five',
  });
  t.equal(updated.policy.description, 'nine to five');

  const bad = await refusal(
    rpc.call(console_, 'slaPolicies.create', { name: 'bad', targets: { high: 5 } } as never),
  );
  t.equal(bad.code, 'VALIDATION_ERROR');
  const httpBad = await h.call(admin, 'POST', '/v1/sla-policies', { name: 'bad', targets: { high: 5 } });
  t.equal(bad.message, httpBad.body.error.message, 'worded as the HTTP API words it');
  const taken = await refusal(
    rpc.call(console_, 'slaPolicies.create', { name: 'rpc-office', targets: targets(1, 2) }),
  );
  t.equal(taken.code, 'CONFLICT');
  t.equal((await rpc.call(console_, 'slaPolicies.list', {})).policies.length, 1, 'nothing created');
  const noChange = await refusal(rpc.call(console_, 'slaPolicies.update', { id: policy.id }));
  t.equal(noChange.code, 'VALIDATION_ERROR', 'an update changes something');
  const badId = await refusal(rpc.call(console_, 'slaPolicies.get', { id: 'whk_nope' }));
  const httpBadId = await h.call(admin, 'GET', '/v1/sla-policies/whk_nope');
  t.same([badId.code, badId.message], [httpBadId.body.error.code, httpBadId.body.error.message]);

  t.same(await rpc.call(console_, 'slaPolicies.delete', { id: policy.id }), {
    ok: true,
    id: policy.id,
    deleted: true,
  });
  t.equal((await refusal(rpc.call(console_, 'slaPolicies.get', { id: policy.id }))).code, 'NOT_FOUND');

  const events = await h.events({ resourceId: policy.id });
  t.same(
    events.map((e) => e.type),
    Array(3).fill('system.config_changed'),
  );
  t.match(events[0], {
    actor: { id: console_.userId, email: console_.email, role: 'admin' },
    metadata: { source: 'console', userAgent: 'Mozilla/5.0 (test)', requestId: 'req-console-1' },
    ipAddress: '203.0.113.9',
  });
  t.match(events[1], { actor: { id: console_.userId }, metadata: { source: 'cli', userAgent: 'deskctl' } });
});

t.test('the trash and jobs: list, restore, follow a job, as admins', async (t) => {
  const h = await harness(t);
  const rpc = requestsAdminClient(h.nc, h.names, identity);
  const admin = h.identity.person('admin').principal;
  const agent = h.identity.person('agent').principal;
  const ids: string[] = [];
  for (const title of ['first', 'second']) {
    const id = (await h.call(agent, 'POST', '/v1/requests', validBody({ title }))).body.data.id as string;
    t.equal((await h.call(admin, 'DELETE', `/v1/requests/${id}`)).status, 200);
    ids.push(id);
  }
  const page1 = await rpc.call(console_, 'trash.list', { limit: 1 });
  t.same(
    page1.deleted.map((r) => r.id),
    [ids[1]],
    'newest deletion first',
  );
  t.ok(page1.pagination.hasMore);
  const http = await h.call(admin, 'GET', '/v1/requests/deleted?limit=1');
  t.same(page1.deleted, http.body.data.deleted, 'as HTTP shows it');
  t.ok(page1.deleted[0]!.purgeAfter);
  const page2 = await rpc.call(console_, 'trash.list', { limit: 1, cursor: page1.pagination.nextCursor! });
  t.same(
    page2.deleted.map((r) => r.id),
    [ids[0]],
  );
  t.equal((await refusal(rpc.call(console_, 'trash.list', { limit: 0 }))).code, 'VALIDATION_ERROR');

  const restored = await rpc.call(deskctl, 'trash.restore', { id: ids[0]! });
  t.match(restored.request, { id: ids[0], title: 'first' });
  t.equal((await h.call(agent, 'GET', `/v1/requests/${ids[0]}`)).status, 200, 'back for everyone');
  const again = await refusal(rpc.call(deskctl, 'trash.restore', { id: ids[0]! }));
  t.same([again.code, again.message], ['CONFLICT', 'Request is not deleted'], 'changes nothing twice');
  const [event] = await h.events({ resourceId: ids[0], type: 'request.restored' });
  t.match(event, { actor: { id: deskctl.userId, role: 'admin' }, metadata: { source: 'cli' } });

  const started = await h.call(agent, 'POST', '/v1/requests/bulk', {
    action: 'update',
    items: [{ id: ids[0] }],
    changes: { priority: 'low' },
  });
  t.equal(started.status, 202, started.body?.error?.message);
  let { job } = await rpc.call(console_, 'jobs.get', { id: started.body.data.id });
  for (let pass = 0; pass < 20 && job.status !== 'completed'; pass++) {
    await h.bulkWorker.runNow();
    ({ job } = await rpc.call(console_, 'jobs.get', { id: job.id }));
  }
  t.same(
    job,
    (await h.call(agent, 'GET', `/v1/jobs/${job.id}`)).body.data,
    "an agent's job, seen by the admin",
  );
  t.match(job, { status: 'completed', succeeded: 1, results: [{ id: ids[0], status: 'succeeded' }] });
  // Another id of the same shape: its last character changed (whatever it was).
  const other = `${job.id.slice(0, -1)}${job.id.endsWith('0') ? '1' : '0'}`;
  const unknown = await refusal(rpc.call(console_, 'jobs.get', { id: other }));
  t.equal(unknown.code, 'NOT_FOUND');
});

t.test('no NATS, or no requests service: unavailable, said as such', async (t) => {
  const h = await harness(t);
  const offline = requestsAdminClient(null, h.names, identity);
  await t.rejects(offline.call(console_, 'trash.list', {}), new RequestsUnavailableError());
  const nobody = requestsAdminClient(h.nc, { ...h.names, requestsAdmin: 'sd.admin.nobody' }, identity, 200);
  await t.rejects(nobody.call(console_, 'slaPolicies.list', {}), { message: REQUESTS_NOT_ANSWERING });
});
