import { randomBytes } from 'node:crypto';
import { connectNats, type NatsConnection } from '@support-desk/platform/messaging';
import {
  asCaller,
  roundTripCounter,
  signCallsLikeTheGateway,
  testEnv,
  testLogger,
} from '@support-desk/platform/testing';
import type { mongo } from 'mongoose';
import t from 'tap';
import { composeService } from '../src/composition.js';
import { createSlaMonitor } from '../src/use-cases/sla-monitor.js';
import { harness, HOUR, MINUTE, validBody } from './helpers.js';
import { EXPECTED } from './round-trips-expected.js';

/**
 * The store commands and NATS messages of every public operation, as README's round-trip table
 * states them: a change that adds a round trip fails here. Store commands are counted by the
 * driver's command monitoring (`roundTripCounter`). NATS messages are counted by subject on an
 * observer connection subscribed to this test's namespace: the service's connection also carries
 * the read-model consumer's pull renewals, sent on their own timer, which are not on any call's path.
 */

/** Every message sent under `namespace` while `operation` runs, as its subject without the namespace. */
async function natsObserver(namespace: string) {
  const observer: NatsConnection = await connectNats({ url: testEnv.natsUrl, name: 'round-trips' });
  const seen: string[] = [];
  const sub = observer.subscribe(`${namespace}.>`, {
    callback: (_err, msg) => {
      seen.push(msg.subject.slice(namespace.length + 1));
    },
  });
  await observer.flush();
  return {
    async during<T>(operation: () => Promise<T>): Promise<{ result: T; subjects: string[] }> {
      seen.length = 0;
      const result = await operation();
      // Deliveries of what the operation sent are queued before the answer to this ping.
      await observer.flush();
      return { result, subjects: [...seen] };
    },
    async close() {
      sub.unsubscribe();
      await observer.close();
    },
  };
}

const BOUNDARY = '----sdroundtrips';
const fileUpload = (data: Buffer) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n` +
        'Content-Type: application/pdf\r\n\r\n',
    ),
    data,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);

t.test('round trips of every public operation', async (t) => {
  // No sweep within the test: the relay's work counted is what this process's writes give it.
  // Directory entries stay cached for the whole test, however slow the machine.
  const h = await harness(
    t,
    // The changes feed serves what the fixed test clock stamps at once; the bulk worker's poll
    // (a background read) stays out of the counts.
    { DIRECTORY_CACHE_TTL_MS: 300_000, CHANGES_SETTLE_MS: 0, BULK_JOBS_POLL_MS: 600_000 },
    { counted: true, relayPollIntervalMs: 3_600_000 },
  );
  await h.relay.idle();
  const counter = roundTripCounter(h.conn);
  // The conditions each call sends for one request or file: `_id` alone (and `rev` on a write),
  // the only shape FerretDB on SQLite pushes down.
  const byIdOnly = new Set(['_id', 'rev']);
  const offShape: string[] = [];
  const watchShape = (e: mongo.CommandStartedEvent) => {
    const single = ['requests', 'attachments.files', 'users_read_model', 'groups_read_model'];
    const target = e.command[e.commandName];
    if (!single.includes(target)) return;
    const filters =
      e.commandName === 'find' && e.command.limit === 1
        ? [e.command.filter]
        : e.commandName === 'update'
          ? e.command.updates.map((u: { q: unknown }) => u.q)
          : [];
    for (const filter of filters)
      if (Object.keys(filter).some((key) => !byIdOnly.has(key)))
        offShape.push(`${e.commandName} ${target} ${JSON.stringify(filter)}`);
  };
  h.conn.getClient().on('commandStarted', watchShape);
  t.teardown(() => void h.conn.getClient().off('commandStarted', watchShape));
  const observer = await natsObserver(h.names.namespace);
  t.teardown(() => observer.close());
  const requester = h.identity.person('agent');
  const agent = h.identity.person('agent');
  const admin = h.identity.person('admin');
  const group = h.identity.addGroup('Network');
  const measured = new Set<string>();

  /** One call with the relay paused (its own trips), then the relay's work for it, checked. */
  const measure = async (name: string, call: () => Promise<{ statusCode: number; body: string }>) => {
    await h.relay.pause();
    const made = await observer.during(() => counter.measure(call));
    const relayed = await observer.during(() =>
      counter.measure(async () => {
        h.relay.resume();
        await h.relay.idle({ sweep: false });
      }),
    );
    const trips = {
      call: [...made.result.trips.storeCommands].sort(),
      nats: [...made.subjects].sort(),
      relay: [...relayed.result.trips.storeCommands].sort(),
      published: [...relayed.subjects].sort(),
    };
    const expected = EXPECTED[name];
    t.same(
      trips,
      { nats: [], relay: [], published: [], ...expected },
      `${name}: store ${trips.call.length}, nats ${trips.nats.length}; relay store ` +
        `${trips.relay.length}, nats ${trips.published.length}`,
    );
    measured.add(name);
    const res = made.result.result;
    return { status: res.statusCode, body: /^[{\d]/.test(res.body) ? JSON.parse(res.body) : null };
  };
  const inject = (
    who: typeof agent,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
  ) => h.app.inject({ method, url, headers: asCaller(who.principal), ...(payload ? { payload } : {}) });
  const upload = (requestId: string) =>
    h.app.inject({
      method: 'POST',
      url: `/v1/requests/${requestId}/attachments`,
      headers: { ...asCaller(agent.principal), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: fileUpload(Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(300_000)])),
    });

  const created = await measure('POST /v1/requests (requester not yet in the read model)', () =>
    inject(requester, 'POST', '/v1/requests', validBody()),
  );
  t.equal(created.status, 201);
  const id = created.body.data.id as string;
  await measure('POST /v1/requests', () => inject(requester, 'POST', '/v1/requests', validBody()));
  const assigned = await measure('POST /v1/requests with assignee and group (first sight of both)', () =>
    inject(agent, 'POST', '/v1/requests', validBody({ assignedTo: agent.user.id, assignedGroup: group.id })),
  );
  await measure('PATCH /v1/requests/:id assign (assignee and group known)', () =>
    inject(agent, 'PATCH', `/v1/requests/${id}`, { assignedTo: agent.user.id, assignedGroup: group.id }),
  );
  await measure('PATCH /v1/requests/:id status', () =>
    inject(agent, 'PATCH', `/v1/requests/${id}`, { status: 'in_progress' }),
  );
  await measure('PATCH /v1/requests/:id changing nothing', () =>
    inject(agent, 'PATCH', `/v1/requests/${id}`, { status: 'in_progress' }),
  );
  await measure('POST /v1/requests/:id/comments (first response)', () =>
    inject(agent, 'POST', `/v1/requests/${id}/comments`, { content: 'On it' }),
  );
  await measure('POST /v1/requests/:id/comments', () =>
    inject(requester, 'POST', `/v1/requests/${id}/comments`, { content: 'Thanks' }),
  );
  const uploaded = await measure(
    'POST /v1/requests/:id/attachments (the first of this process, 300 kB)',
    () => upload(id),
  );
  t.equal(uploaded.status, 201);
  const attachmentId = uploaded.body.data.id as string;
  await measure('POST /v1/requests/:id/attachments (300 kB)', () => upload(id));
  // A comment by an agent the read model has never seen: the first read looks the author up.
  const helper = h.identity.person('agent');
  await inject(helper, 'POST', `/v1/requests/${id}/comments`, { content: 'Me too' });
  await h.relay.idle({ sweep: false });
  await measure('GET /v1/requests/:id (a comment author not in the read model)', () =>
    inject(requester, 'GET', `/v1/requests/${id}`),
  );
  await measure('GET /v1/requests/:id', () => inject(requester, 'GET', `/v1/requests/${id}`));
  /** Another replica (composed the same way, on the same database): its directory cache is cold. */
  const newReplica = async () => {
    const replica = await composeService({
      config: h.config,
      logger: testLogger('requests'),
      conn: h.conn,
      nc: h.nc,
      names: h.names,
      clock: h.clock.now,
    });
    const replicaApp = signCallsLikeTheGateway(replica.app, 'requests');
    t.teardown(() => replicaApp.close());
    return replicaApp;
  };
  const replicaApp = await newReplica();
  await measure('GET /v1/requests/:id on a replica that has not seen these users and group', () =>
    replicaApp.inject({ method: 'GET', url: `/v1/requests/${id}`, headers: asCaller(agent.principal) }),
  );
  // A write's events carry the request's people (the snapshot): a replica that has not seen them
  // reads them once, like a single read.
  const freshApp = await newReplica();
  await measure('PATCH /v1/requests/:id on a replica that has not seen its people (the snapshot)', () =>
    freshApp.inject({
      method: 'PATCH',
      url: `/v1/requests/${assigned.body.data.id}`,
      headers: asCaller(agent.principal),
      payload: { title: 'Renamed on a replica' },
    }),
  );
  await measure('GET /v1/requests?status=in_progress', () =>
    inject(agent, 'GET', '/v1/requests?status=in_progress'),
  );
  await measure('GET /v1/requests (page 1 of all)', () => inject(agent, 'GET', '/v1/requests'));
  const firstPage = await measure('GET /v1/requests?limit=2 (page mode, with nextCursor)', () =>
    inject(agent, 'GET', '/v1/requests?limit=2'),
  );
  await measure('GET /v1/requests?cursor= (cursor mode)', () =>
    inject(agent, 'GET', `/v1/requests?limit=2&cursor=${firstPage.body.data.pagination.nextCursor}`),
  );
  await measure('GET /v1/requests?q=printer&status=open,in_progress&sort=-priority', () =>
    inject(agent, 'GET', '/v1/requests?q=printer&status=open,in_progress&sort=-priority'),
  );
  await measure('GET /v1/requests?requester=&tags= (equalities the store serves from an index)', () =>
    inject(agent, 'GET', `/v1/requests?requester=${requester.user.id}&tags=printer`),
  );
  await measure('GET /v1/requests/:id/comments (authors cached)', () =>
    inject(agent, 'GET', `/v1/requests/${id}/comments?limit=2`),
  );
  await measure('GET /v1/requests/changes (people cached)', () =>
    inject(agent, 'GET', '/v1/requests/changes'),
  );
  await measure('GET /v1/attachments/:id', () => inject(agent, 'GET', `/v1/attachments/${attachmentId}`));
  await measure('DELETE /v1/requests/:id', () => inject(admin, 'DELETE', `/v1/requests/${id}`));
  const gone = await measure('GET /v1/requests/:id (deleted: 404)', () =>
    inject(agent, 'GET', `/v1/requests/${id}`),
  );
  t.equal(gone.status, 404);
  await measure('GET /v1/attachments/:id (request deleted: 404)', () =>
    inject(agent, 'GET', `/v1/attachments/${attachmentId}`),
  );

  // Background work: SLA monitor passes. The first pass of a monitor scans in full, later ones
  // read the minutes since the last pass (two or three). The open requests' response warning
  // (high priority: 80 % of 4 h) falls due at 3 h 12 min.
  const slaMonitor = createSlaMonitor(h.deps);
  const monitor = async (name: string) =>
    measure(name, async () => ({ statusCode: 200, body: String(await slaMonitor.runNow()) }));
  await monitor('SLA monitor, first pass (full scan), nothing due');
  await monitor('SLA monitor, next pass (by minute), nothing due');
  h.clock.advance(3 * HOUR + 11 * MINUTE + 50_000);
  await slaMonitor.runNow(); // a full scan: more than 10 minutes since the last pass
  h.clock.advance(20_000);
  const warned = await monitor('SLA monitor, next pass (by minute, three minutes), two warnings due');
  t.equal(warned.body, 2);
  t.same([...measured].sort(), Object.keys(EXPECTED).sort(), 'every operation of the table measured');
  t.same(offShape, [], 'every single-document read and every write by _id (and rev) alone');
});
