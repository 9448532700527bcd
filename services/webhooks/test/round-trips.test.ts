// What the intake asks of the store for a burst of events, counted on the real servers (command
// monitoring on the service's own connection).
import { jetstreamManager } from '@nats-io/jetstream';
import { newId } from '@support-desk/contracts';
import { consumerAckFloor } from '@support-desk/platform';
import { eventually, testCountedMongo, testNats } from '@support-desk/platform/testing';
import type { mongo } from 'mongoose';
import t from 'tap';
import {
  composeForTest,
  deliveries,
  event,
  publish,
  secretKey,
  startReceiver,
  subscribe,
} from './helpers.js';

/** Events waiting in the stream when the intake starts: one burst, taken in 16 at a time. */
const BURST = 32;

t.test('a burst of events reads the live subscriptions a few times, not once per event', async (t) => {
  const conn = await testCountedMongo(t, 'webhooks');
  const { nc, names } = await testNats(t);
  const { app, service } = await composeForTest(t, {
    shared: { conn, nc, names, key: secretKey() },
    start: false,
  });
  const receiver = await startReceiver(t);
  const sub = await subscribe(app, { url: receiver.url, events: ['request.created'] });
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
