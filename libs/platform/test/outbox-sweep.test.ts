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
import { outboxPlugin } from '../src/subpaths/store.js';
import { eventually, testCountedMongo, testLogger, testNats, testSigner } from '../src/testing/index.js';

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

  // This process's writes are stamped with their minute and published by id.
  const mine = newId('request');
  const created = buildEvent('request.created', mine, systemContext());
  await Things.create({ _id: mine, title: 'mine', outbox: [eventEntry(names, created)] });
  await relay.idle({ sweep: false });
  const stamped = await Things.findById(mine).select('+outboxMinute').lean<Thing>();
  t.match(stamped?.outboxMinute, /^\d{4}-\d\d-\d\dT\d\d:\d\d$/, 'the write carries its minute');
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
  const published = relay.stats.published;
  now += 3 * MINUTE_MS;
  await eventually(async () => relay.stats.published === published + 1 || null, {
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
  t.same((await Things.findById(theirs).select('+outbox').lean<Thing>())?.outbox, []);
});
