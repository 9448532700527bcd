import { jetstreamManager } from '@nats-io/jetstream';
import { natsNames } from '@support-desk/contracts';
import { connectMongo } from '@support-desk/platform/service';
import { connectNats, deadLetterStore, provisionStreams } from '@support-desk/platform/messaging';
import {
  eventually,
  startPrivateMongo,
  startPrivateNats,
  testEnv,
  testMongo,
  testNats,
  uniqueName,
} from '@support-desk/platform/testing';
import t from 'tap';
import { eventWriter, StoreUnavailableError } from '../src/store/event-writes.js';
import { countEvents, ingest, makeEvent, prepareStore, publish } from './helpers.js';

const batchOf = (n: number) =>
  Array.from({ length: n }, (_, i) => makeEvent(i % 2 ? 'user.login' : 'request.updated'));

t.test('stored but not acked (write succeeds, then the handler fails once): one record each', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const real = eventWriter(conn);
  let crashes = 1;
  const ingestion = await ingest(
    t,
    { nc, conn, names },
    {
      insert: async (docs) => {
        const outcome = await real(docs);
        if (crashes-- > 0) throw new StoreUnavailableError(new Error('crash after the write'));
        return outcome;
      },
    },
  );
  const events = batchOf(40);
  await publish(nc, names, events);
  await eventually(() => ingestion.stats().acked === 40, { what: 'all acked' });
  t.equal(await countEvents(conn), 40, 'each event stored once');
  t.ok(ingestion.stats().nacked > 0, 'the first batch was nak-ed after it was written');
  t.ok(ingestion.stats().duplicates > 0, 'its redelivery met the stored copies');
});

t.test('consumer dies between write and ack; a new one stores nothing twice', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  // The doomed instance has its own connection: closing it is the process dying (no ack sent).
  const doomedNc = await connectNats({ url: testEnv.natsUrl, name: 'doomed' });
  const real = eventWriter(conn);
  let written = 0;
  const doomed = await ingest(
    t,
    { nc: doomedNc, conn, names },
    {
      insert: async (docs) => {
        await real(docs);
        written += docs.length;
        await doomedNc.close();
        throw new Error('process died');
      },
    },
  );
  const events = batchOf(60);
  await publish(nc, names, events);
  await eventually(() => doomedNc.isClosed() && written > 0, { what: 'a batch written, then the crash' });
  await doomed.stop();
  t.equal(doomed.stats().acked, 0, 'the dead instance acked nothing');

  const survivor = await ingest(t, { nc, conn, names });
  await eventually(async () => (await countEvents(conn)) === 60 && survivor.stats().acked >= 60, {
    what: 'all stored after redelivery',
    timeoutMs: 20_000,
  });
  t.equal(await countEvents(conn), 60, 'exactly one record per event');
  t.ok(survivor.stats().duplicates >= written, 'the redelivered, already written events were duplicates');
});

t.test('restart catch-up: events published while stopped are all stored after it starts', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const first = await ingest(t, { nc, conn, names });
  await publish(nc, names, batchOf(30));
  await eventually(async () => (await countEvents(conn)) === 30, { what: 'first batch' });
  await first.stop();

  await publish(nc, names, batchOf(200));
  t.equal(await countEvents(conn), 30, 'nothing stored while stopped');
  const second = await ingest(t, { nc, conn, names });
  await eventually(async () => (await countEvents(conn)) === 230, { what: 'caught up', timeoutMs: 20_000 });
  t.equal(second.stats().duplicates, 0, 'nothing acked before was delivered again');
});

t.test('NATS outage (private server stopped and restarted): nothing lost, nothing doubled', async (t) => {
  const server = await startPrivateNats(t);
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const nc = await connectNats({ url: server.url, name: 'audit-outage' });
  t.teardown(() => nc.close());
  const names = natsNames(uniqueName('t'));
  await provisionStreams(nc, names);
  const ingestion = await ingest(t, { nc, conn, names });

  await publish(nc, names, batchOf(100));
  await eventually(async () => (await countEvents(conn)) === 100, { what: 'before the outage' });
  // Published (and acked by JetStream) right before the server goes away: in flight at the stop.
  await publish(nc, names, batchOf(300));
  await server.stop();
  await server.start();
  await eventually(() => !nc.isClosed() && nc.flush().then(() => true), {
    what: 'reconnected',
    timeoutMs: 20_000,
  });
  await publish(nc, names, batchOf(100));
  await eventually(async () => (await countEvents(conn)) === 500, { what: 'all stored', timeoutMs: 40_000 });
  const jsm = await jetstreamManager(nc);
  await eventually(
    async () => (await jsm.consumers.info(names.eventsStream, 'audit')).num_ack_pending === 0,
    {
      what: 'everything acked',
      timeoutMs: 20_000,
    },
  );
  t.equal(await countEvents(conn), 500, 'exactly 500 records');
  t.equal(ingestion.stats().deadLettered, 0);
});

t.test('MongoDB outage (private server stopped and restarted): nothing lost, nothing doubled', async (t) => {
  const mongo = await startPrivateMongo(t);
  const conn = await connectMongo({ url: mongo.url, dbName: 'audit', serverSelectionTimeoutMS: 2000 });
  t.teardown(() => conn.close());
  await prepareStore(conn);
  const { nc, names } = await testNats(t);
  const ingestion = await ingest(t, { nc, conn, names }, { maxDeliver: 2 });

  await publish(nc, names, batchOf(50));
  await eventually(async () => (await countEvents(conn)) === 50, { what: 'before the outage' });
  await mongo.stop();
  await publish(nc, names, batchOf(150));
  // 150 events nak-ed 300 times: the outage lasted past maxDeliver (2) deliveries.
  await eventually(() => ingestion.stats().failedBatches > 0 && ingestion.stats().nacked >= 300, {
    what: 'writes failing during the outage, redelivered past maxDeliver',
    timeoutMs: 30_000,
  });
  await mongo.start();
  await eventually(async () => (await countEvents(conn)) === 200, { what: 'all stored', timeoutMs: 60_000 });
  await eventually(() => ingestion.stats().acked >= 200, { what: 'all acked', timeoutMs: 20_000 });
  t.equal(await countEvents(conn), 200, 'exactly 200 records');
  t.equal(ingestion.stats().deadLettered, 0, 'the outage outlasted maxDeliver and still no dead letter');
  t.equal(await deadLetterStore(conn).model.countDocuments(), 0);
});
