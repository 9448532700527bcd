import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newId } from '@support-desk/contracts';
import { eventually, freePort, testEnv } from '@support-desk/platform/testing';
import t from 'tap';
import type { Send } from '../src/events/sender.js';
import {
  admin,
  composeForTest,
  deliveries,
  event,
  eventsFrom,
  FAST,
  publish,
  startReceiver,
  subscribe,
} from './helpers.js';

const SERVER = fileURLToPath(new URL('../src/server.js', import.meta.url));

t.test(
  'two replicas: every event delivered, never one delivery attempted twice at once, in order',
  async (t) => {
    const running = new Map<string, number>();
    let overlaps = 0;
    const watch =
      (send: Send): Send =>
      async (d) => {
        running.set(d.id, (running.get(d.id) ?? 0) + 1);
        if (running.get(d.id)! > 1) overlaps++;
        try {
          return await send(d);
        } finally {
          running.set(d.id, running.get(d.id)! - 1);
        }
      };
    // No replica dies here: a claim, and a wait for the receiver's answer, long enough that a
    // busy machine does not outlast them (claims that expire are the next test's).
    // Retries enough that no delivery runs out of them on the receiver's every-third failures.
    const env = {
      WEBHOOKS_LEASE_MS: '30000',
      WEBHOOKS_RESPONSE_TIMEOUT_MS: '5000',
      WEBHOOKS_RETRY_SCHEDULE_MS: '100,200,300,300,300,300,300,300',
    };
    const a = await composeForTest(t, { wrapSend: watch, env });
    const b = await composeForTest(t, { shared: a, wrapSend: watch, env });
    // A slow-ish receiver that fails every third call: retries and lanes overlap in time.
    const receiver = await startReceiver(t, (_req, res, n) =>
      setTimeout(() => res.writeHead(n % 3 === 0 ? 500 : 200).end(), 5),
    );
    const sub = await subscribe(a.app, { url: receiver.url, events: ['request.*'] });
    const resources = [newId('request'), newId('request'), newId('request')];
    const events = resources.flatMap((r) =>
      (['request.created', 'request.updated', 'request.status_changed', 'request.assigned'] as const).map(
        (type) => event(type, r),
      ),
    );
    await publish(a.nc, a.names, events);
    const done = await eventually(
      async () => {
        const list = await deliveries(b.app, sub.id, '?limit=100');
        return list.length === events.length && list.every((d) => d.status === 'succeeded') && list;
      },
      { what: 'all delivered', timeoutMs: 30_000 },
    );
    t.equal(done.length, 12);
    t.equal(overlaps, 0, 'no delivery attempted by two replicas at once');
    const successes = receiver.received.filter((_r, i) => (i + 1) % 3 !== 0);
    for (const r of resources) {
      const order = successes
        .map((x) => JSON.parse(x.body) as { id: string; resourceId: string })
        .filter((e) => e.resourceId === r)
        .map((e) => e.id);
      // At least once: an answer the sender did not see in time (a machine too busy) is sent again
      // at once, so a repeat may follow itself; any other repeat would break the order.
      const firsts = order.filter((id, i) => id !== order[i - 1]);
      const expected = events.filter((e) => e.resourceId === r).map((e) => e.id);
      t.same(firsts, expected, `the events of ${r} arrived in order`);
    }
  },
);

t.test(
  'a subscription disabled through another replica: the worker holding a copy of it sends no more',
  async (t) => {
    // The worker keeps the subscriptions it sends for (here for longer than the test): only the
    // change notice another replica's write publishes can tell it the subscription is off.
    const worker = await composeForTest(t, { env: { WEBHOOKS_SUBSCRIPTION_CACHE_MS: '600000' } });
    const api = await composeForTest(t, { shared: worker, start: false });
    const receiver = await startReceiver(t);
    const sub = await subscribe(api.app, { url: receiver.url, events: ['request.*'] });
    const changes = await eventsFrom(worker.nc, worker.names.eventsStream);
    await publish(worker.nc, worker.names, [event('request.created')]);
    await eventually(() => receiver.received.length === 1, { what: 'the first event delivered' });

    const off = await api.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${sub.id}`,
      headers: admin,
      payload: { active: false },
    });
    t.equal(off.statusCode, 200);
    // The change's event on the stream (published by the worker replica's relay: the API replica
    // runs none): the worker has heard it by then, on the same connection.
    await changes(2, sub.id);
    const later = event('request.created');
    await publish(worker.nc, worker.names, [later]);
    const held = await eventually(
      async () => {
        const stored = await worker.conn
          .collection('deliveries')
          .findOne({ subscriptionId: sub.id, eventId: later.id });
        return stored && (stored.status !== 'pending' || stored.dueMinute === null) && stored;
      },
      { what: 'the later delivery worked' },
    );
    t.equal(held.status, 'pending', 'held while the subscription is off');
    t.equal(receiver.received.length, 1, 'not sent');
  },
);

t.test('kill -9 of a replica mid-delivery: nothing lost, duplicates carry the same webhook-id', async (t) => {
  const first = await composeForTest(t, { start: false });
  // The first answers only after a while, so the replica is killed with attempts in flight.
  const receiver = await startReceiver(t, (_req, res, n) =>
    setTimeout(() => res.writeHead(200).end(), n <= 2 ? 2000 : 0),
  );
  const sub = await subscribe(first.app, { url: receiver.url, events: ['request.*'] });

  const start = async () => {
    const child = spawn(process.execPath, [SERVER], {
      stdio: 'ignore',
      env: {
        ...process.env,
        ...FAST,
        WEBHOOKS_CONNECT_TIMEOUT_MS: '200',
        WEBHOOKS_RESPONSE_TIMEOUT_MS: '3000',
        WEBHOOKS_LEASE_MS: '9600',
        WEBHOOKS_PORT: String(await freePort()),
        METRICS_PORT: String(await freePort()),
        MONGO_URL: testEnv.mongoUrl,
        MONGO_DB: first.conn.name,
        NATS_URL: testEnv.natsUrl,
        NATS_NAMESPACE: first.names.namespace,
        LOG_LEVEL: 'silent',
        PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
        WEBHOOKS_SECRET_KEY: first.key,
      },
    });
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    return child;
  };
  const victim = await start();
  const events = [event('request.created'), event('request.created'), event('request.created')];
  await publish(first.nc, first.names, events);
  await eventually(() => receiver.received.length >= 2, { what: 'attempts in flight', timeoutMs: 20_000 });
  victim.kill('SIGKILL');
  await start();
  const done = await eventually(
    async () => {
      const list = await deliveries(first.app, sub.id);
      return list.length === 3 && list.every((d) => d.status === 'succeeded') && list;
    },
    { what: 'every event delivered by the survivor', timeoutMs: 30_000 },
  );
  const byId = new Map<string, Set<string>>();
  for (const r of receiver.received) {
    const id = JSON.parse(r.body).id as string;
    byId.set(id, (byId.get(id) ?? new Set()).add(r.headers['webhook-id']));
  }
  t.same([...byId.keys()].sort(), events.map((e) => e.id).sort(), 'each event arrived at least once');
  for (const ids of byId.values()) t.equal(ids.size, 1, 'a duplicate has the same webhook-id');
  t.equal(done.length, 3);
});
