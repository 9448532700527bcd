import { jetstreamManager } from '@nats-io/jetstream';
import { newId } from '@support-desk/contracts';
import { type Connection, mongo, Schema } from 'mongoose';
import t from 'tap';
import {
  AGGREGATE_HARD_CAP_BYTES,
  AGGREGATE_MAX_BYTES,
  AGGREGATE_WRITE_ATTEMPTS,
  outboxPlugin,
  selectOutbox,
  updateAggregate,
} from '../src/subpaths/store.js';
import { buildEvent, eventEntry, type OutboxEntry, systemContext } from '../src/subpaths/core.js';
import { createOutboxRelay } from '../src/subpaths/messaging.js';
import {
  eventually,
  type Teardownable,
  testCountedMongo,
  testLogger,
  testMongo,
  testNats,
  testSigner,
} from '../src/testing/index.js';

interface Ticket {
  _id: string;
  title: string;
  tags: string[];
  deletedAt: Date | null;
  rev?: number;
  outbox?: OutboxEntry[];
}

async function ticketModel(t: Teardownable, prefix = 'aggregate', conn?: Connection) {
  conn ??= await testMongo(t, prefix);
  const schema = new Schema<Ticket>({
    _id: String,
    title: String,
    tags: [String],
    deletedAt: { type: Date, default: null },
    rev: Number,
  });
  outboxPlugin(schema);
  return conn.model<Ticket>('Ticket', schema);
}

const retitle = (title: string) => (current: Ticket) => ({
  write: current.title === title ? null : { set: { title } },
  result: current.title,
});

t.test('a write lands with its outbox entries and bumps the revision', async (t) => {
  const Tickets = await ticketModel(t);
  const { names } = await testNats(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'a', tags: [], rev: 0 });
  const event = buildEvent('request.updated', id, systemContext(), { title: { from: 'a', to: 'b' } });
  const before = await updateAggregate<Ticket, string>(
    Tickets,
    id,
    (current) => ({
      write: { set: { title: 'b' }, append: { tags: ['x', 'y'] }, outbox: [eventEntry(names, event)] },
      result: current.title,
    }),
    { what: 'Ticket' },
  );
  t.equal(before, 'a', 'decide saw the stored state and its result is returned');
  const stored = await Tickets.findById(id).select('+outbox').lean<Ticket>();
  t.match(stored, { title: 'b', tags: ['x', 'y'], rev: 1 });
  t.same(
    stored?.outbox?.map((e) => e.id),
    [event.id],
    'the event is in the same document write',
  );
});

t.test('no change: no write, the revision stays', async (t) => {
  const Tickets = await ticketModel(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'same', tags: [], rev: 3 });
  t.equal(await updateAggregate(Tickets, id, retitle('same'), { what: 'Ticket' }), 'same');
  t.equal((await Tickets.findById(id).lean<Ticket>())?.rev, 3);
});

t.test('a document written before revisions existed gets one on its first update', async (t) => {
  const Tickets = await ticketModel(t);
  const id = newId('request');
  await Tickets.collection.insertOne({ _id: id, title: 'old', tags: [], deletedAt: null } as never);
  await updateAggregate(Tickets, id, retitle('new'), { what: 'Ticket' });
  t.match(await Tickets.findById(id).lean<Ticket>(), { title: 'new', rev: 1 });
});

t.test('a concurrent change is never overwritten: the loser reads again and decides again', async (t) => {
  const Tickets = await ticketModel(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'start', tags: [], rev: 0 });
  const seen: string[][] = [];
  let interfered = false;
  await updateAggregate<Ticket, void>(
    Tickets,
    id,
    async (current) => {
      seen.push(current.tags);
      if (!interfered) {
        interfered = true;
        // Another writer lands between this read and this write (it bumps the revision).
        await updateAggregate<Ticket, void>(
          Tickets,
          id,
          () => ({ write: { append: { tags: ['theirs'] } }, result: undefined }),
          { what: 'Ticket' },
        );
      }
      return { write: { set: { tags: [...current.tags, 'mine'] } }, result: undefined };
    },
    { what: 'Ticket' },
  );
  t.same(seen, [[], ['theirs']], 'decided twice, the second time on the other writer’s state');
  t.match(await Tickets.findById(id).lean<Ticket>(), { tags: ['theirs', 'mine'], rev: 2 });
});

t.test('always losing the race ends in 409 after the bounded attempts', async (t) => {
  const Tickets = await ticketModel(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'start', tags: [], rev: 0 });
  let decisions = 0;
  await t.rejects(
    updateAggregate<Ticket, void>(
      Tickets,
      id,
      async () => {
        decisions++;
        await Tickets.updateOne({ _id: id }, { $inc: { rev: 1 } });
        return { write: { set: { title: `try ${decisions}` } }, result: undefined };
      },
      { what: 'Ticket' },
    ),
    { code: 'CONFLICT', statusCode: 409, message: 'The ticket was changed concurrently; retry' },
  );
  t.equal(decisions, AGGREGATE_WRITE_ATTEMPTS);
  t.equal((await Tickets.findById(id).lean<Ticket>())?.title, 'start', 'nothing of the losing writes landed');
});

t.test('not found, and not visible (soft-deleted), are both 404', async (t) => {
  const Tickets = await ticketModel(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'gone', tags: [], rev: 0, deletedAt: new Date() });
  const options = { what: 'Ticket', visible: (doc: Ticket) => doc.deletedAt === null };
  await t.rejects(updateAggregate(Tickets, newId('request'), retitle('x'), options), {
    code: 'NOT_FOUND',
    message: 'Ticket not found',
  });
  await t.rejects(updateAggregate(Tickets, id, retitle('x'), options), { code: 'NOT_FOUND' });
  t.match(await Tickets.findById(id).lean<Ticket>(), { title: 'gone', rev: 0 }, 'nothing written');
});

t.test('the store is asked by _id (read) and by _id and revision (write) only', async (t) => {
  const conn = await testCountedMongo(t, 'aggshape');
  const Tickets = await ticketModel(t, 'aggshape', conn);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'a', tags: [], rev: 4 });
  const filters: { command: string; filter: unknown }[] = [];
  const client = conn.getClient();
  const record = (e: mongo.CommandStartedEvent) => {
    if (e.commandName === 'find') filters.push({ command: 'find', filter: e.command.filter });
    if (e.commandName === 'update') filters.push({ command: 'update', filter: e.command.updates[0].q });
  };
  client.on('commandStarted', record);
  const visible = (doc: Ticket) => doc.deletedAt === null;
  await updateAggregate(Tickets, id, retitle('b'), { what: 'Ticket', visible });
  client.off('commandStarted', record);
  t.same(filters, [
    { command: 'find', filter: { _id: id } },
    { command: 'update', filter: { _id: id, rev: 4 } },
  ]);
});

t.test(
  'current: the first attempt decides on the document the caller read, a stale one reads again',
  async (t) => {
    const Tickets = await ticketModel(t);
    const id = newId('request');
    await Tickets.create({ _id: id, title: 'a', tags: [], rev: 0 });
    const read = await Tickets.findById(id).select(selectOutbox).lean<Ticket>();
    const seen: string[] = [];
    const tag = (name: string) => (current: Ticket) => {
      seen.push(current.title);
      return { write: { set: { title: name } }, result: undefined };
    };
    await updateAggregate<Ticket, void>(Tickets, id, tag('b'), { what: 'Ticket', current: read! });
    t.same(seen, ['a'], 'decided once, on the copy given');
    // The same copy again is stale now (revision 0, stored 1): the write misses, the next attempt reads.
    await updateAggregate<Ticket, void>(Tickets, id, tag('c'), { what: 'Ticket', current: read! });
    t.same(seen, ['a', 'a', 'b']);
    t.match(await Tickets.findById(id).lean<Ticket>(), { title: 'c', rev: 2 });
  },
);

t.test('two relays in one process over two databases each publish their own writes at once', async (t) => {
  // Same collection name in two databases (two services, or two test databases, in one process).
  const first = await ticketModel(t, 'relay-a');
  const second = await ticketModel(t, 'relay-b');
  const { nc, names } = await testNats(t);
  // A poll interval far beyond the test: only the in-process notes can publish in time.
  const relays = [first, second].map((model) =>
    createOutboxRelay({
      nc,
      models: [model],
      logger: testLogger(),
      signer: testSigner('requests'),
      pollIntervalMs: 600_000,
    }),
  );
  t.teardown(() => Promise.all(relays.map((r) => r.stop())));
  for (const relay of relays) relay.start();
  await Promise.all(relays.map((r) => r.idle()));

  const written: string[] = [];
  for (const model of [first, second, first, second]) {
    const id = newId('request');
    const event = buildEvent('request.created', id, systemContext(), { title: { from: null, to: id } });
    await model.create({ _id: id, title: id, tags: [], rev: 0, outbox: [eventEntry(names, event)] });
    written.push(event.id);
  }
  const jsm = await jetstreamManager(nc);
  await eventually(
    async () => {
      const info = await jsm.streams.info(names.eventsStream);
      return info.state.messages >= written.length;
    },
    { timeoutMs: 20_000, what: 'every write published' },
  );
  t.equal((await jsm.streams.info(names.eventsStream)).state.messages, written.length);
});

t.test('an aggregate stops growing at its size budget; other writes still land', async (t) => {
  const Tickets = await ticketModel(t, 'aggsize');
  const { names } = await testNats(t);
  const id = newId('request');
  await Tickets.create({ _id: id, title: 'a', tags: [], rev: 0 });
  const tag = 'x'.repeat(1000);
  const maxBytes = 16 * 1024;
  const addTag = () =>
    updateAggregate<Ticket, null>(Tickets, id, () => ({ write: { append: { tags: [tag] } }, result: null }), {
      what: 'Ticket',
      maxBytes,
    });
  let added = 0;
  let refusal: unknown = null;
  for (let i = 0; i < 40 && !refusal; i++) {
    try {
      await addTag();
      added++;
    } catch (err) {
      refusal = err;
    }
  }
  t.ok(added > 10, `${added} appends of 1 kB landed`);
  t.match(refusal, { statusCode: 409, message: /ticket has reached its size limit/ });
  const stored = await Tickets.findById(id).select('+outbox').lean<Ticket>();
  const size = mongo.BSON.calculateObjectSize(stored!);
  t.ok(
    size <= maxBytes && size + tag.length > maxBytes,
    `stopped within one append of the budget (${size} B)`,
  );

  const event = buildEvent('request.deleted', id, systemContext(), undefined);
  await updateAggregate<Ticket, null>(
    Tickets,
    id,
    () => ({ write: { set: { deletedAt: new Date() }, outbox: [eventEntry(names, event)] }, result: null }),
    { what: 'Ticket', maxBytes },
  );
  t.ok((await Tickets.findById(id).lean<Ticket>())?.deletedAt, 'a delete past the budget still lands');
  // The largest non-appending write (a 20,000-character description, from and to in its event)
  // is under 256 KiB: past the hard cap there is still room for it under BSON's 16 MiB.
  t.ok(AGGREGATE_HARD_CAP_BYTES + 512 * 1024 < 16 * 1024 * 1024, 'the hard cap leaves room under 16 MiB');
  t.ok(AGGREGATE_MAX_BYTES < AGGREGATE_HARD_CAP_BYTES);
});
