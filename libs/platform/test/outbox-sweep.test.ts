import { newId } from '@support-desk/contracts';
import { type mongo, Schema } from 'mongoose';
import t from 'tap';
import {
  buildEvent,
  eventEntry,
  MINUTE_MS,
  minuteKey,
  type OutboxEntry,
  systemContext,
} from '../src/subpaths/core.js';
import { createOutboxRelay } from '../src/subpaths/messaging.js';
import { outboxPlugin, pushOutbox } from '../src/subpaths/store.js';
import {
  eventually,
  testCountedMongo,
  testLogger,
  testMongo,
  testNats,
  testSigner,
} from '../src/testing/index.js';

interface Thing {
  _id: string;
  title: string;
  outbox?: OutboxEntry[];
  outboxMinute?: string;
}

t.test('entries another process left are swept by their minute, not by reading everything', async (t) => {
  const conn = await testCountedMongo(t, 'sweep');
  const schema = new Schema<Thing>({ _id: String, title: String });
  outboxPlugin(schema);
  const Things = conn.model<Thing>('Thing', schema);
  await Things.createIndexes();
  const { nc, names } = await testNats(t);
  const finds: unknown[] = [];
  const record = (e: mongo.CommandStartedEvent) => {
    if (e.commandName === 'find' && e.command.find === 'things') finds.push(e.command.filter);
  };
  conn.getClient().on('commandStarted', record);
  t.teardown(() => void conn.getClient().off('commandStarted', record));

  let now = Date.parse('2030-01-01T09:00:30Z');
  const relay = createOutboxRelay({
    nc,
    models: [Things],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 20,
    clock: () => now,
  });
  t.teardown(() => relay.stop());
  relay.start();
  await relay.idle({ sweep: false });
  t.same(finds, [{ 'outbox.id': { $exists: true } }], 'a full sweep at start');

  // This process's writes are stamped with their minute and published by id; the minute goes
  // with the last entry, so the sweep of that minute will not read the document.
  const mine = newId('request');
  const created = buildEvent('request.created', mine, systemContext());
  await relay.pause();
  await Things.create({ _id: mine, title: 'mine', outbox: [eventEntry(names, created)] });
  const stamped = await Things.findById(mine).select('+outboxMinute').lean<Thing>();
  t.match(stamped?.outboxMinute, /^\d{4}-\d\d-\d\dT\d\d:\d\d$/, 'the write carries its minute');
  relay.resume();
  await relay.idle({ sweep: false });
  const published = await Things.findById(mine).select('+outbox +outboxMinute').lean<Thing>();
  t.same(published?.outbox, [], 'published');
  t.equal(published?.outboxMinute, undefined, 'and its minute removed with its last entry');
  // A write that adds no entry gives the relay nothing to read.
  finds.length = 0;
  await Things.updateOne({ _id: mine }, { $set: { title: 'renamed' } });
  await relay.idle({ sweep: false });
  t.same(finds, [], 'not noted: no read');

  // Left pending by another process at 09:00 (not noted here): found once 09:00 is two minutes old.
  const theirs = newId('request');
  const left = buildEvent('request.created', theirs, systemContext());
  await Things.collection.insertOne({
    _id: theirs,
    title: 'theirs',
    outbox: [eventEntry(names, left)],
    outboxMinute: minuteKey(Date.parse('2030-01-01T09:00:10Z')),
  } as never);
  const publishedBefore = relay.stats.published;
  now += 3 * MINUTE_MS;
  await eventually(async () => relay.stats.published === publishedBefore + 1 || null, {
    what: 'the entry left behind published',
  });
  t.same(
    finds.filter((f) => JSON.stringify(f).includes('outboxMinute')),
    ['2030-01-01T08:59', '2030-01-01T09:00', '2030-01-01T09:01'].map((minute) => ({
      outboxMinute: minute,
      'outbox.id': { $exists: true },
    })),
    'the minutes since the last sweep, each once',
  );
  t.notOk(
    finds.some((f) => JSON.stringify(f) === JSON.stringify({ 'outbox.id': { $exists: true } })),
    'no full sweep',
  );
  t.same(
    await Things.findById(theirs).select('+outbox +outboxMinute').lean<Thing>(),
    { _id: theirs, title: 'theirs', outbox: [] },
    'swept: its entries and its minute gone',
  );
});

t.test('an entry the relay did not see keeps the document in its minute', async (t) => {
  const conn = await testMongo(t, 'sweepkeep');
  const schema = new Schema<Thing>({ _id: String, title: String });
  outboxPlugin(schema);
  const Things = conn.model<Thing>('Thing', schema);
  await Things.createIndexes();
  const { nc, names } = await testNats(t);
  const relay = createOutboxRelay({
    nc,
    models: [Things],
    logger: testLogger(),
    signer: testSigner('requests'),
  });
  t.teardown(() => relay.stop());
  relay.start();
  await relay.idle();

  // Left by another process (not noted here), then written by this one: the relay publishes the
  // entry it noted, and finds another in the document.
  const id = newId('request');
  const left = eventEntry(names, buildEvent('request.created', id, systemContext()));
  await Things.collection.insertOne({
    _id: id,
    title: 'theirs',
    outbox: [left],
    outboxMinute: '2030-01-01T09:00',
  } as never);
  const mine = eventEntry(names, buildEvent('request.updated', id, systemContext()));
  await Things.updateOne({ _id: id }, { $set: { title: 'mine' }, $push: pushOutbox([mine]) });
  await relay.idle({ sweep: false });

  const kept = await Things.findById(id).select('+outbox +outboxMinute').lean<Thing>();
  t.same(
    kept?.outbox?.map((e) => e.id),
    [left.id],
    'only the entry it published is removed',
  );
  t.match(
    kept?.outboxMinute,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d$/,
    'the document stays in its minute for the sweep',
  );
  await relay.idle();
  t.same(
    await Things.findById(id).select('+outbox +outboxMinute').lean<Thing>(),
    { _id: id, title: 'mine', outbox: [] },
    'the sweep publishes the other, and the minute goes with it',
  );
});
