// Two processes of every service (gateways, requests, identity, audit), through the gateways only:
// the system gives the same results as with one. Every write has exactly one audit record (audit
// replicas share one durable consumer); SLA alerts are emitted once although both requests
// replicas run the monitor; a Standard key gets exactly its 60 calls a minute across both
// gateways; a revoked key and a deactivated user are refused by both gateways within a second;
// a renamed user shows in reads served by either requests replica.
import t from 'tap';
import { cast, createActor, createKey } from '../src/actors.js';
import type { Json } from '../src/http.js';
import { scrape, total } from '../src/metrics.js';
import { eventually, sleep, startStack } from '../src/stack.js';
import { createRequest } from '../src/world.js';

// Low priority, standard tier: first response due after 12 s, resolution after 18 s; warnings at a
// quarter of each (3 s, 4.5 s). A warning is skipped by design when a monitor first sees the
// request past its target (the breach then says it all); windows of 9 s and 13.5 s against passes
// every 250 ms leave no room for that here, so each clock must warn exactly once.
const POLICY = { standard: { low: { responseMinutes: 0.2, resolutionMinutes: 0.3 } } };
const stack = await startStack(t, {
  replicas: 2,
  env: {
    SLA_POLICY: JSON.stringify(POLICY),
    SLA_MONITOR_INTERVAL_MS: '250',
    SLA_WARNING_RATIO: '0.25',
    // 500 concurrent calls on a loaded test machine can keep a gateway's event loop from reading
    // Redis's answers within the default 250 ms; fail-open then admits the call (a CI run saw 65
    // of 60). This file is about exact counting across replicas; fail-open has its own tests.
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    // The same: the per-minute count, not the cap on calls in flight, is under test here.
    CREDENTIAL_CONCURRENCY: '0',
  },
});
const { admin, agent } = await cast(stack);
const via = (gateway: number, key: string) => stack.apiVia(gateway, key);
const auditOf = async (resourceId: string): Promise<Json[]> => {
  const res = await admin.api.get(`/v1/events?resourceId=${resourceId}&limit=100`);
  return res.status === 200 ? res.json.data.events : [];
};

t.test('every write, through either gateway, has exactly one audit record', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const api = via(i % 2, agent.key);
    const created = await api.post('/v1/requests', {
      title: `R${i}`,
      description: 'two replicas',
      priority: 'high',
    });
    t.equal(created.status, 201);
    const id = created.json.data.id as string;
    ids.push(id);
    t.equal(
      (await via((i + 1) % 2, agent.key).patch(`/v1/requests/${id}`, { status: 'in_progress' })).status,
      200,
    );
    t.equal((await api.post(`/v1/requests/${id}/comments`, { content: 'on it' })).status, 201);
  }
  const expected = { 'request.created': 1, 'request.status_changed': 1, 'request.comment_added': 1 };
  for (const id of ids) {
    const events = await eventually(
      async () => {
        const all = await auditOf(id);
        return all.length >= 3 ? all : null;
      },
      { what: `the audit records of ${id}` },
    );
    await sleep(200);
    const counts: Record<string, number> = {};
    for (const e of await auditOf(id)) counts[e.type] = (counts[e.type] ?? 0) + 1;
    t.same(counts, expected, `${id}: one record per write (${events.length})`);
  }
});

t.test('SLA alerts are emitted once per request and clock, with two monitors running', async (t) => {
  const created = await createRequest(t, agent.api, { priority: 'low' });
  const breaches = async () =>
    (await auditOf(created.id)).filter(
      (e) => e.type === 'system.sla_breach' || e.type === 'system.sla_warning',
    );
  await eventually(
    async () => (await breaches()).filter((e) => e.type === 'system.sla_breach').length >= 2 || null,
    { timeoutMs: 60_000, what: 'both clocks breached' },
  );
  await sleep(2_000); // more passes of both monitors: nothing may be emitted twice
  const alerts = await breaches();
  for (const clock of ['response', 'resolution']) {
    for (const type of ['system.sla_breach', 'system.sla_warning']) {
      const n = alerts.filter((e) => e.type === type && `sla.${clock}Status` in (e.changes ?? {})).length;
      t.equal(n, 1, `${type} for the ${clock} clock: exactly one`);
    }
  }
});

t.test('a Standard key gets exactly 60 calls a minute across both gateways', async (t) => {
  const { key } = await createKey(
    stack,
    agent.email,
    ['requests:read'],
    ['--plan', 'standard'],
    'standard-2gw',
  );
  const calls = await Promise.all(Array.from({ length: 500 }, (_, i) => via(i % 2, key).get('/v1/me')));
  const admitted = calls.filter((r) => r.status === 200).length;
  t.equal(admitted, 60, 'admitted: exactly the plan, not one more');
  t.equal(calls.filter((r) => r.status === 429).length, 440, 'the rest refused');
});

t.test('a revoked key and a deactivated user are refused by both gateways within a second', async (t) => {
  const keyed = await createActor(stack, 'agent', 'revokee');
  const user = await createActor(stack, 'agent', 'leaver');
  for (const g of [0, 1]) {
    t.equal((await via(g, keyed.key).get('/v1/me')).status, 200, `gateway ${g + 1} accepts the key first`);
    t.equal((await via(g, user.key).get('/v1/me')).status, 200);
  }
  await Promise.all([
    stack.deskctlJson(['api-keys', 'revoke', keyed.keyId, '--yes']),
    admin.api.delete(`/v1/users/${user.id}`).then((res) => t.equal(res.status, 200, 'deactivated')),
  ]);
  // One start for every check, which all run at once: each gateway's refusal is timed from the
  // moment both changes were made, not from the end of the check before it.
  const start = Date.now();
  const refusedAfter = async (g: number, key: string, what: string) => {
    await eventually(async () => (await via(g, key).get('/v1/me')).status === 401 || null, {
      timeoutMs: 5000,
      intervalMs: 50,
      what: `gateway ${g + 1} refuses the ${what}`,
    });
    return { what: `gateway ${g + 1}, ${what}`, ms: Date.now() - start };
  };
  const refusals = await Promise.all(
    [0, 1].flatMap((g) => [
      refusedAfter(g, keyed.key, 'revoked key'),
      refusedAfter(g, user.key, 'deactivated user'),
    ]),
  );
  t.comment(`refused after: ${refusals.map((r) => `${r.what} ${r.ms} ms`).join('; ')}`);
  for (const r of refusals) t.ok(r.ms <= 1000, `${r.what}: refused within 1 s (${r.ms} ms)`);
});

t.test('a user renamed in identity shows in reads served by either requests replica', async (t) => {
  const requester = await createActor(stack, 'agent', 'renamed');
  const created = await requester.api.post('/v1/requests', {
    title: 'Rename',
    description: 'd',
    priority: 'low',
  });
  const id = created.json.data.id as string;
  t.equal((await admin.api.patch(`/v1/users/${requester.id}`, { name: 'Renamed Person' })).status, 200);
  // Reads through the gateways, which spread them over both requests replicas (BalancedPool);
  // each replica's own /metrics count of `GET /v1/requests/:id` says how many of a round it
  // served. A round counts when all ten reads show the new name and both replicas served some.
  const replicas = stack.instances.filter((i) => i.startsWith('requests'));
  t.equal(replicas.length, 2);
  const servedReads = async () =>
    Promise.all(
      replicas.map(async (r) =>
        total(await scrape(stack, r), 'http_server_request_duration_seconds_count', {
          http_request_method: 'GET',
          http_route: '/v1/requests/:id',
        }),
      ),
    );
  const served = await eventually(
    async () => {
      const before = await servedReads();
      const names = await Promise.all(
        Array.from(
          { length: 10 },
          async (_, i) => (await via(i % 2, admin.key).get(`/v1/requests/${id}`)).json.data.requester.name,
        ),
      );
      const after = await servedReads();
      const byReplica = after.map((n, r) => n - before[r]);
      return (
        (names.every((n) => n === 'Renamed Person') && byReplica.every((n) => n > 0) && byReplica) || null
      );
    },
    { what: 'the new name in reads served by both replicas' },
  );
  t.comment(`reads served per requests replica: ${served.join(', ')}`);
  t.pass('every read, served by either replica, shows the new name');
});
