import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { natsNames, newId } from '@support-desk/contracts';
import { Schema } from 'mongoose';
import t from 'tap';
import { buildEvent, eventEntry, type OutboxEntry, systemContext } from '../src/subpaths/core.js';
import { connectNats, createOutboxRelay, provisionStreams } from '../src/subpaths/messaging.js';
import { metrics } from '../src/subpaths/metrics.js';
import { outboxPlugin, pushOutbox } from '../src/subpaths/store.js';
import {
  eventually,
  startPrivateNats,
  type Teardownable,
  testEnv,
  testLogger,
  testMongo,
  testNats,
  uniqueName,
  testSigner,
} from '../src/testing/index.js';

async function aggregateModel(t: Teardownable) {
  const conn = await testMongo(t, 'outbox');
  const schema = new Schema<{ _id: string; title: string; version: number; outbox: OutboxEntry[] }>({
    _id: String,
    title: String,
    version: Number,
  });
  outboxPlugin(schema);
  const Thing = conn.model('Thing', schema);
  await Thing.createIndexes();
  return Thing;
}

/** Creates a thing and its event in one write, like a use case does. */
async function createThing(
  Thing: Awaited<ReturnType<typeof aggregateModel>>,
  names: ReturnType<typeof natsNames>,
  n: number,
) {
  const id = newId('request');
  const event = buildEvent('request.created', id, systemContext(), { title: { from: null, to: `t${n}` } });
  await Thing.create({ _id: id, title: `t${n}`, version: 1, outbox: [eventEntry(names, event)] });
  return { id, eventId: event.id };
}

/** A relay of the model, started, stopped at teardown; its sweep left to the test (1 min). */
function startedRelay(
  t: Teardownable,
  nc: Parameters<typeof createOutboxRelay>[0]['nc'],
  Thing: Awaited<ReturnType<typeof aggregateModel>>,
) {
  const relay = createOutboxRelay({
    nc,
    models: [Thing],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 60_000,
  });
  t.teardown(() => relay.stop());
  relay.start();
  return relay;
}

async function streamMessages(nc: Parameters<typeof jetstreamManager>[0], stream: string) {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const out: { subject: string; id: string; body: Record<string, unknown> }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    if (!m) continue;
    out.push({ subject: m.subject, id: m.header?.get('Nats-Msg-Id') ?? '', body: m.json() });
  }
  return out;
}

t.test('events written with the change are published in order, then removed', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const relay = startedRelay(t, nc, Thing);

  const { id } = await createThing(Thing, names, 1);
  const second = buildEvent('request.updated', id, systemContext(), { title: { from: 't1', to: 't2' } });
  const third = buildEvent('request.status_changed', id, systemContext(), {
    status: { from: 'open', to: 'closed' },
  });
  await Thing.updateOne(
    { _id: id },
    { $set: { title: 't2' }, $push: pushOutbox([eventEntry(names, second), eventEntry(names, third)]) },
  );

  const messages = await eventually(
    async () => {
      const m = await streamMessages(nc, names.eventsStream);
      return m.length === 3 ? m : null;
    },
    { what: 'three events on the stream' },
  );
  t.same(
    messages.map((m) => m.body.type),
    ['request.created', 'request.updated', 'request.status_changed'],
    'per-aggregate order kept',
  );
  t.same(
    messages.map((m) => m.id),
    messages.map((m) => m.body.id),
    'Nats-Msg-Id is the event id',
  );
  t.equal(messages[1].subject, names.eventSubject('request.updated'));
  await eventually(async () => (await Thing.findById(id).select('+outbox').lean())?.outbox?.length === 0, {
    what: 'outbox emptied',
  });
  t.equal(relay.stats.published, 3);
  t.equal((await Thing.findById(id).lean())?.title, 't2', 'the change itself is intact');
});

t.test('a relay stopping publishes the writes this process made since its last pass', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const relay = startedRelay(t, nc, Thing);
  await relay.idle();
  // Paused, as between two passes: the write is noted, and nothing but stop publishes it.
  await relay.pause();
  const { id, eventId } = await createThing(Thing, names, 1);
  await relay.stop();

  const messages = await streamMessages(nc, names.eventsStream);
  t.same(
    messages.map((m) => m.id),
    [eventId],
    'published by stop itself, not minutes later by another replica sweep',
  );
  t.same((await Thing.findById(id).select('+outbox').lean())?.outbox, [], 'and removed from the document');
});

t.test('the backlog gauges count the writes the relay has not read yet, and their age', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const relay = startedRelay(t, nc, Thing);
  await relay.idle();
  const gauge = async (name: string) => {
    const { values } = await metrics.getSingleMetric(name)!.get();
    return values.find((v) => v.labels.collection === Thing.collection.collectionName)?.value ?? 0;
  };
  const before = await gauge('outbox_backlog_entries');
  // Paused, as while the relay is busy with an earlier batch: the writes wait, noted.
  await relay.pause();
  for (let n = 0; n < 3; n++) await createThing(Thing, names, n);
  await new Promise((r) => setTimeout(r, 1100));
  t.equal((await gauge('outbox_backlog_entries')) - before, 3, 'the three waiting entries');
  t.ok((await gauge('outbox_oldest_entry_age_seconds')) >= 1, 'and how long the oldest has waited');
  relay.resume();
  await relay.idle({ sweep: false });
  t.equal(await gauge('outbox_backlog_entries'), before, 'none once the relay published them');
});

t.test('a compare-and-set that matched nothing publishes nothing of what it would have added', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const relay = startedRelay(t, nc, Thing);
  const { id } = await createThing(Thing, names, 1);
  const lost = buildEvent('request.updated', id, systemContext(), { title: { from: 't1', to: 'lost' } });
  const res = await Thing.updateOne(
    { _id: id, version: 2 }, // the document is at version 1: the write applies nowhere
    { $set: { title: 'lost' }, $push: pushOutbox([eventEntry(names, lost)]) },
  );
  t.equal(res.modifiedCount, 0);
  await relay.idle({ sweep: false });
  const messages = await streamMessages(nc, names.eventsStream);
  t.same(
    messages.map((m) => m.body.type),
    ['request.created'],
    "only the insert's event: the entries the write noted are never taken as applied",
  );
  t.equal(relay.stats.published, 1);
});

t.test('writes while NATS is down are published exactly once after it returns', async (t) => {
  const Thing = await aggregateModel(t);
  const nats = await startPrivateNats(t);
  const names = natsNames(uniqueName('t'));
  const nc = await connectNats({ url: nats.url, name: 'outbox-outage' });
  t.teardown(() => nc.close());
  await provisionStreams(nc, names);
  const relay = createOutboxRelay({
    nc,
    models: [Thing],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 200,
    publishTimeoutMs: 500,
  });
  t.teardown(() => relay.stop());
  relay.start();

  await nats.stop();
  const written = [];
  for (let n = 0; n < 5; n++) written.push(await createThing(Thing, names, n));
  await new Promise((r) => setTimeout(r, 700));
  const pending = await Thing.countDocuments({ 'outbox.id': { $exists: true } });
  t.equal(pending, 5, 'nothing is lost while NATS is down: all still pending');

  await nats.start();
  const messages = await eventually(
    async () => {
      if ((await Thing.countDocuments({ 'outbox.id': { $exists: true } })) > 0) return null;
      return streamMessages(nc, names.eventsStream);
    },
    { timeoutMs: 30_000, what: 'outbox drained after NATS returned' },
  );
  t.equal(messages.length, 5, 'each event exactly once');
  t.same(new Set(messages.map((m) => m.id)), new Set(written.map((w) => w.eventId)));
});

t.test('a relay killed between publish and mark-sent causes no duplicate', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const { id, eventId } = await createThing(Thing, names, 1);
  // The state a crash leaves: the entry was published but is still in the outbox.
  const doc = await Thing.findById(id).select('+outbox').lean();
  const entry = doc!.outbox[0];
  await jetstream(nc).publish(entry.subject, entry.payload, { msgID: entry.id });

  const relay = startedRelay(t, nc, Thing);
  await relay.idle();
  const messages = await streamMessages(nc, names.eventsStream);
  t.equal(messages.length, 1, 'the republish was de-duplicated by Nats-Msg-Id');
  t.equal(messages[0].id, eventId);
  t.equal((await Thing.findById(id).select('+outbox').lean())?.outbox.length, 0, 'entry marked sent');
});

t.test('a backlog larger than one scan batch drains in one go, and idle() waits for all of it', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  // Written by "another process": only the relay's scan can find these, 5 per batch.
  const docs = Array.from({ length: 23 }, (_, n) => {
    const id = newId('request');
    const event = buildEvent('request.created', id, systemContext(), { title: { from: null, to: `t${n}` } });
    return { _id: id, title: `t${n}`, version: 1, outbox: [eventEntry(names, event)] };
  });
  await Thing.collection.insertMany(docs as never[]);
  const relay = createOutboxRelay({
    nc,
    models: [Thing],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 60_000, // no second chance from the timer within this test
    batchSize: 5,
  });
  t.teardown(() => relay.stop());
  relay.start();
  await relay.idle();
  t.equal(relay.stats.published, 23, 'every pending document published before idle() resolved');
  t.equal(await Thing.countDocuments({ 'outbox.id': { $exists: true } }), 0, 'nothing left pending');
  t.equal((await streamMessages(nc, names.eventsStream)).length, 23);
});

t.test('two relays on one collection publish each event once', async (t) => {
  const Thing = await aggregateModel(t);
  const { nc, names } = await testNats(t);
  const nc2 = await connectNats({ url: testEnv.natsUrl, name: 'relay-2' });
  t.teardown(() => nc2.close());
  const a = createOutboxRelay({
    nc,
    models: [Thing],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 20,
    batchSize: 7,
  });
  const b = createOutboxRelay({
    nc: nc2,
    models: [Thing],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 20,
    batchSize: 7,
  });
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  a.start();
  b.start();
  const written = [];
  for (let n = 0; n < 40; n++) {
    written.push(await createThing(Thing, names, n));
  }
  const messages = await eventually(
    async () => {
      if ((await Thing.countDocuments({ 'outbox.id': { $exists: true } })) > 0) return null;
      const m = await streamMessages(nc, names.eventsStream);
      return m.length >= 40 ? m : null;
    },
    { timeoutMs: 30_000, what: 'all events published' },
  );
  t.equal(messages.length, 40, 'no event appears twice on the stream');
  t.equal(new Set(messages.map((m) => m.id)).size, 40);
  t.ok(a.stats.published + b.stats.published >= 40, 'both relays took part or one did it all');
});

t.test('concurrent writes to one aggregate while the relay cleans up lose nothing', async (t) => {
  const conn = await testMongo(t, 'outbox_race');
  const schema = new Schema<{ _id: string; a: number; b: number; c: number; outbox: OutboxEntry[] }>({
    _id: String,
    a: Number,
    b: Number,
    c: Number,
  });
  outboxPlugin(schema);
  const Agg = conn.model('Agg', schema);
  await Agg.createIndexes();
  const { nc, names } = await testNats(t);
  // A long scan interval: writes in this process reach the relay by id on their own.
  const relay = createOutboxRelay({
    nc,
    models: [Agg],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 600_000,
  });
  t.teardown(() => relay.stop());
  relay.start();

  const rounds = 8;
  const expectedEvents = new Set<string>();
  for (let round = 0; round < rounds; round++) {
    const id = newId('request');
    const created = buildEvent('request.created', id, systemContext());
    expectedEvents.add(created.id);
    await Agg.create({ _id: id, a: 0, b: 0, c: 0, outbox: [eventEntry(names, created)] });
    const updates = (['a', 'b', 'c'] as const).map((field) => {
      const event = buildEvent('request.updated', id, systemContext(), { [field]: { from: 0, to: 1 } });
      expectedEvents.add(event.id);
      return Agg.updateOne(
        { _id: id },
        { $set: { [field]: 1 }, $push: pushOutbox([eventEntry(names, event)]) },
      );
    });
    await Promise.all(updates);
    const doc = await Agg.findById(id).lean();
    t.same([doc?.a, doc?.b, doc?.c], [1, 1, 1], `round ${round}: every concurrent change kept`);
  }
  const messages = await eventually(
    async () => {
      const m = await streamMessages(nc, names.eventsStream);
      return m.length >= expectedEvents.size ? m : null;
    },
    { timeoutMs: 30_000, what: 'all events published without a scan' },
  );
  t.equal(messages.length, expectedEvents.size, 'each event exactly once');
  t.same(new Set(messages.map((m) => m.id)), expectedEvents);
  await eventually(async () => (await Agg.countDocuments({ 'outbox.id': { $exists: true } })) === 0, {
    what: 'outboxes emptied',
  });
});
