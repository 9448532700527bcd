import { Schema } from 'mongoose';
import t from 'tap';
import { encodeJson } from '../src/subpaths/messaging.js';
import { roundTripCounter, testCountedMongo, testMongo, testNats } from '../src/testing/index.js';

t.test('counts the commands the store received and the messages NATS sent', async (t) => {
  const conn = await testCountedMongo(t, 'trips');
  const { nc, names } = await testNats(t);
  const Note = conn.model('Note', new Schema({ _id: String, text: String }));
  await Note.create({ _id: 'n1', text: 'first' });
  const counter = roundTripCounter(conn, nc);

  const read = await counter.measure(() => Note.findById('n1').lean());
  t.equal(read.result?.text, 'first', 'the operation ran and its result is returned');
  t.same(read.trips, { store: 1, storeCommands: ['find notes'], nats: 0 });

  const write = await counter.measure(async () => {
    await Note.updateOne({ _id: 'n1' }, { $set: { text: 'second' } });
    await Note.countDocuments({});
    nc.publish(`${names.namespace}.trips.one`, encodeJson({ n: 1 }));
    nc.publish(`${names.namespace}.trips.two`, encodeJson({ n: 2 }));
  });
  t.same(write.trips.storeCommands, ['update notes', 'aggregate notes']);
  t.equal(write.trips.store, 2);
  t.equal(write.trips.nats, 2, 'both publishes counted');

  const none = await counter.measure(async () => 'nothing');
  t.same(none.trips, { store: 0, storeCommands: [], nats: 0 }, 'counting stops between operations');
});

t.test('refuses a connection whose commands cannot be seen', async (t) => {
  const conn = await testMongo(t, 'trips');
  t.throws(() => roundTripCounter(conn), /testCountedMongo/);
});
