// What the intake asks of the store for a burst of events, counted on the real servers (command
// monitoring on the service's own connection).
import { jetstreamManager } from '@nats-io/jetstream';
import { newId } from '@support-desk/contracts';
import { consumerAckFloor } from '@support-desk/platform/messaging';
import { eventually, roundTripCounter, testCountedMongo, testNats } from '@support-desk/platform/testing';
import type { mongo } from 'mongoose';
import t, { type Test } from 'tap';
import {
  composeForTest,
  deliveries,
  event,
  publish,
  secretKey,
  startReceiver,
  subscribe,
} from './helpers.js';

/**
 * The webhooks service on a store connection that counts its commands, with a receiver and one
 * `request.created` subscription to it; `start: false` leaves its background work stopped.
 */
async function countedService(t: Test, { start }: { start: boolean }) {
  const conn = await testCountedMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const { app, service } = await composeForTest(t, {
    shared: { conn, nc, names, key: secretKey() },
    start,
    // The defaults' patience: a burst on a loaded machine (CI beside a cluster) timed out 10 of 64
    // attempts at the fast tests' 1.5 s, and a retried attempt is two more writes and reads.
    env: {
      WEBHOOKS_CONNECT_TIMEOUT_MS: '5000',
      WEBHOOKS_RESPONSE_TIMEOUT_MS: '15000',
      WEBHOOKS_LEASE_MS: '60000',
    },
  });
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.created'] });
  return { conn, nc, names, app, service, receiver, sub };
}

/** Events waiting in the stream when the intake starts: one burst, taken in 16 at a time. */
const BURST = 32;

t.test('a burst of events reads the live subscriptions a few times, not once per event', async (t) => {
  const { conn, nc, names, app, service, sub } = await countedService(t, { start: false });
  const events = Array.from({ length: BURST }, () => event('request.created', newId('request')));
  await publish(nc, names, events);
  const lastSeq = (await (await jetstreamManager(nc)).streams.info(names.eventsStream)).state.last_seq;

  // The intake's reads of every live subscription (the worker's look-ups by id are not counted).
  let liveReads = 0;
  const onCommand = (e: mongo.CommandStartedEvent) => {
    const filter = e.command.filter as Record<string, unknown> | undefined;
    if (e.command.find === 'subscriptions' && filter?.deleted === false && !('_id' in filter)) liveReads++;
  };
  conn.getClient().on('commandStarted', onCommand);
  t.teardown(() => void conn.getClient().off('commandStarted', onCommand));
  await service.start();
  t.teardown(() => service.close());
  const floor = consumerAckFloor(nc, names.eventsStream, 'webhooks', 0);
  await eventually(async () => (await floor()) >= lastSeq, { what: 'the burst taken in' });

  const stored = await deliveries(app, sub.id, '?limit=100');
  t.equal(stored.length, BURST, 'every event made its delivery');
  t.ok(
    liveReads >= 1 && liveReads <= BURST / 4,
    `${liveReads} reads of the live subscriptions for ${BURST} events`,
  );
});

t.test('an idle worker asks the store nothing: woken by work, not by a poll', async (t) => {
  // WEBHOOKS_POLL_MS is 50 ms here (FAST): a polling worker would read twenty times a second.
  const { conn, nc, names, app, sub } = await countedService(t, { start: true });
  await publish(nc, names, [event('request.created')]);
  await eventually(async () => (await deliveries(app, sub.id))[0]?.status === 'succeeded', {
    what: 'the event delivered',
  });
  // Once the lane's last pass is over, a window of a second and a half passes without a read of
  // the deliveries or the lane claims (a few windows allowed for that pass on a busy machine).
  const counter = roundTripCounter(conn);
  const quiet = await eventually(
    async () => {
      const { trips } = await counter.measure(() => new Promise((r) => setTimeout(r, 1500)));
      return trips.storeCommands.every((c) => !/ (deliveries|lane_leases)$/.test(c));
    },
    { what: 'a window without worker reads', timeoutMs: 10_000 },
  ).catch(() => false);
  t.ok(quiet, 'no reads of the deliveries while nothing is due');
});

t.test(
  'a burst of deliveries: at most three store round trips an attempt (5.5 before), no write but the outcome, the subscription read once',
  async (t) => {
    const { conn, nc, names, service, receiver, sub } = await countedService(t, { start: false });
    // One event per resource (as many lanes), waiting in the stream when the service starts: a
    // burst, worked WEBHOOKS_CONCURRENCY (32) lanes at a time.
    const burst = 2 * BURST;
    await publish(
      nc,
      names,
      Array.from({ length: burst }, () => event('request.created', newId('request'))),
    );
    // Every command of the worker (its passes, claims, reads and writes), from its start: not the
    // intake's (its reads of the live subscriptions, its inserts), the relay's or the test's own.
    const worker: string[] = [];
    const onCommand = (e: mongo.CommandStartedEvent) => {
      const collection = e.command[e.commandName] as unknown;
      const filter = e.command.filter as Record<string, unknown> | undefined;
      if (
        typeof collection !== 'string' ||
        !['deliveries', 'lane_leases', 'subscriptions'].includes(collection)
      )
        return;
      if (collection === 'deliveries' && e.commandName === 'insert') return;
      if (collection === 'subscriptions' && typeof filter?._id !== 'string') return;
      if (filter && 'subscriptionId' in filter) return; // the test's reads of the delivery log
      if (e.commandName === 'aggregate') return; // and their counts
      if (e.commandName === 'create' || e.commandName === 'createIndexes') return; // the start's
      worker.push(`${e.commandName} ${collection}`);
    };
    conn.getClient().on('commandStarted', onCommand);
    t.teardown(() => void conn.getClient().off('commandStarted', onCommand));
    await service.start();
    t.teardown(() => service.close());
    // Watched in the store, not through the API (whose reads of the subscription would count).
    const succeeded = () =>
      conn.collection('deliveries').countDocuments({ subscriptionId: sub.id, status: 'succeeded' });
    await eventually(async () => (await succeeded()) === burst, { what: 'every delivery made' });
    t.equal(receiver.received.length, burst, 'one attempt each');
    // A lane's release follows its outcome: every claim is gone once the last lane has ended.
    const released = await eventually(
      async () => (await conn.collection('lane_leases').countDocuments()) === 0,
      { what: 'every claim released', timeoutMs: 10_000 },
    ).catch(() => false);
    t.ok(released, 'every claim released');
    const byCommand = new Map<string, number>();
    for (const c of worker) byCommand.set(c, (byCommand.get(c) ?? 0) + 1);
    const counts = JSON.stringify(Object.fromEntries(byCommand));
    // No mark before an attempt (the lease is the mark): the outcome is the one write, and lanes
    // finishing together share one bulk write.
    t.ok((byCommand.get('update deliveries') ?? 0) <= burst, `one write an attempt at most: ${counts}`);
    // The subscription is read once and kept for every lane's attempts (a few reads: its copy
    // lasts WEBHOOKS_SUBSCRIPTION_CACHE_MS, and a slow machine may outlast that).
    t.ok((byCommand.get('find subscriptions') ?? 0) <= burst / 8, `subscription read once: ${counts}`);
    t.ok(
      (byCommand.get('delete lane_leases') ?? 0) <= (byCommand.get('insert lane_leases') ?? 0),
      `releases shared: ${counts}`,
    );
    // Per lane worked: its claim (one insert) and its head (with the next); the outcomes and the
    // releases of lanes finishing together go as one write each. On main's worker (a claim, the
    // head, a mark, the outcome and a release per attempt): 355 for 64.
    t.ok(worker.length <= 3 * burst, `${worker.length} store round trips for ${burst} attempts: ${counts}`);
  },
);
