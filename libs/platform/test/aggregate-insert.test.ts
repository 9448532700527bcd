import { newId } from '@support-desk/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import mongoose, { Schema } from 'mongoose';
import t from 'tap';
import { buildEvent, eventEntry, systemContext } from '../src/subpaths/core.js';
import { createOutboxRelay } from '../src/subpaths/messaging.js';
import { insertWithOutbox, OUTBOX_MINUTE_FIELD, outboxPlugin } from '../src/subpaths/store.js';
import {
  eventually,
  testLogger,
  testMongo,
  testNats,
  type Teardownable,
  testSigner,
} from '../src/testing/index.js';

interface Ticket {
  _id: string;
  title: string;
  count: number;
  owner: string | null;
  opener: { id: string; name: string | null };
  clock: { due: Date; warnedAt?: Date | null; pausedMs?: number };
  notes: { text: string; at: Date }[];
  labels?: string[];
}

const ClockSchema = new Schema(
  {
    due: { type: Date, required: true },
    warnedAt: { type: Date, default: null },
    pausedMs: { type: Number, default: 0 },
  },
  { _id: false },
);

async function ticketModel(t: Teardownable) {
  const conn = await testMongo(t, 'insert');
  const schema = new Schema<Ticket>(
    {
      _id: { type: String, required: true },
      title: { type: String, required: true },
      count: { type: Number, required: true },
      owner: { type: String, default: 'nobody' },
      opener: { id: { type: String, required: true }, name: { type: String, default: 'anonymous' } },
      clock: { type: ClockSchema, required: true },
      notes: { type: [new Schema({ text: String, at: Date }, { _id: false })], default: [] },
      labels: { type: [String], default: [] },
    },
    { versionKey: false, minimize: false },
  );
  outboxPlugin(schema);
  const Ticket = conn.model<Ticket>('Ticket', schema);
  await Ticket.createIndexes();
  return Ticket;
}

const ticket = (title: string): Ticket =>
  ({
    _id: newId('request'),
    title,
    count: '3' as unknown as number, // cast, as mongoose casts it
    owner: null, // an explicit null stays null: the default does not replace it
    opener: { id: 'usr_1', name: null },
    clock: { due: new Date('2026-11-26T12:00:00Z'), warnedAt: null }, // pausedMs: the default
    notes: [{ text: 'first', at: new Date('2026-11-26T11:00:00Z') }],
    unknown: 'dropped', // not in the schema: left out, as strict mode does
  }) as Ticket;

/** A stored document with its keys sorted at every depth and its id left out. */
function content(doc: Record<string, unknown> | null): string {
  const sorted = (value: unknown): unknown =>
    value instanceof Date || typeof value !== 'object' || value === null
      ? value
      : Array.isArray(value)
        ? value.map(sorted)
        : Object.fromEntries(
            Object.keys(value)
              // The minute stamp is the clock's (checked on its own below).
              .filter((key) => key !== '_id' && key !== OUTBOX_MINUTE_FIELD)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          );
  return JSON.stringify(sorted(doc));
}

t.test('stores what model.create stores, and the relay publishes its events then removes them', async (t) => {
  const Ticket = await ticketModel(t);
  const { nc, names } = await testNats(t);
  const viaCreate = ticket('same');
  const viaInsert = ticket('same');
  const entries = (id: string) => [
    eventEntry(
      names,
      buildEvent('request.created', id, systemContext(), { title: { from: null, to: 'same' } }),
    ),
  ];
  const createdEntries = entries(viaCreate._id);
  const insertedEntries = entries(viaInsert._id);
  // No relay runs yet: both are read back with their entries.
  await Ticket.create({ ...viaCreate, outbox: createdEntries });
  await insertWithOutbox(Ticket, viaInsert, insertedEntries);
  const [created, inserted] = await Promise.all([
    Ticket.collection.findOne({ _id: viaCreate._id } as never),
    Ticket.collection.findOne({ _id: viaInsert._id } as never),
  ]);
  t.ok(inserted, 'inserted');
  const withoutOutbox = (doc: Record<string, unknown> | null) => ({ ...doc, outbox: undefined });
  t.equal(content(withoutOutbox(inserted)), content(withoutOutbox(created)), 'same fields and values');
  t.same(inserted?.owner, null, 'explicit null kept');
  t.same(inserted?.clock, { due: new Date('2026-11-26T12:00:00Z'), warnedAt: null, pausedMs: 0 });
  t.equal(inserted?.count, 3, 'cast to a number');
  t.notOk('unknown' in (inserted ?? {}), 'unknown field dropped');
  t.match(inserted?.[OUTBOX_MINUTE_FIELD], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/, 'stamped for the sweep');
  t.same(
    (inserted?.outbox as { id: string }[]).map((e) => e.id),
    insertedEntries.map((e) => e.id),
  );

  // The insert noted its entries for the relay: started again, it publishes them without a sweep.
  const relay = createOutboxRelay({
    nc,
    models: [Ticket],
    logger: testLogger(),
    signer: testSigner('requests'),
    pollIntervalMs: 60_000,
  });
  t.teardown(() => relay.stop());
  relay.start();
  // Its first pass sweeps in full; the next sweep is a minute away, so only the note can publish
  // what is inserted after it.
  await relay.idle();
  await insertWithOutbox(Ticket, ticket('later'), entries(newId('request')));
  const later = await Ticket.collection.findOne({ title: 'later' } as never);
  await eventually(
    async () => (await Ticket.collection.findOne({ _id: later?._id } as never))?.outbox?.length === 0,
    { what: 'the relay removing the published entries' },
  );
  const jsm = await jetstreamManager(nc);
  const stream = await jsm.streams.info(names.eventsStream);
  t.ok(stream.state.messages >= 1, 'published to the events stream');
});

t.test('a value that does not cast, or a required field left out, stores nothing', async (t) => {
  const Ticket = await ticketModel(t);
  const { names } = await testNats(t);
  const entry = () => [eventEntry(names, buildEvent('request.created', 'req_x', systemContext(), {}))];

  const uncastable = { ...ticket('bad count'), count: 'many' as unknown as number };
  const castError = await insertWithOutbox(Ticket, uncastable, entry()).catch((err: unknown) => err);
  t.ok(castError instanceof mongoose.Error.ValidationError, 'a ValidationError');
  t.match(Object.keys((castError as mongoose.Error.ValidationError).errors), ['count']);

  const { title: _title, ...untitled } = ticket('no title');
  const { due: _due, ...undated } = ticket('x').clock;
  for (const [name, doc, path] of [
    ['top-level', untitled, 'title'],
    ['in a subdocument', { ...ticket('no due'), clock: undated }, 'clock.due'],
  ] as const) {
    const err = await insertWithOutbox(Ticket, doc as Ticket, entry()).catch((e: unknown) => e);
    t.ok(err instanceof mongoose.Error.ValidationError, `${name}: a ValidationError`);
    t.same(Object.keys((err as mongoose.Error.ValidationError).errors), [path], `${name}: names ${path}`);
  }
  t.equal(await Ticket.countDocuments({}), 0, 'nothing stored');
});
