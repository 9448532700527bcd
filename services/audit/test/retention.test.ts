import { testCountedMongo, testLogger, testMongo } from '@support-desk/platform/testing';
import t from 'tap';
import { toStoredEvent } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';
import { startRetention, TTL_INDEX } from '../src/store/retention.js';
import { makeEvent, prepareStore } from './helpers.js';

const DAY = 86_400_000;

t.test('retention: TTL index where supported, else a bounded sweeper; off keeps everything', async (t) => {
  const conn = await testMongo(t, 'audit');
  await prepareStore(conn);
  const now = new Date();
  const old = Array.from({ length: 25 }, (_, i) =>
    makeEvent('user.login', { at: new Date(now.getTime() - 3 * DAY - i) }),
  );
  const fresh = Array.from({ length: 5 }, () =>
    makeEvent('user.login', { at: new Date(now.getTime() - DAY / 2) }),
  );
  await eventModel(conn).collection.insertMany([...old, ...fresh].map((e) => toStoredEvent(e)) as never[]);

  const off = await startRetention({
    conn,
    logger: testLogger(),
    days: 0,
    sweepIntervalMs: 60_000,
    sweepBatch: 10,
  });
  t.equal(off.mode, 'off');
  t.equal(await off.sweepOnce(), 0, 'off deletes nothing');

  const on = await startRetention({
    conn,
    logger: testLogger(),
    days: 2,
    sweepIntervalMs: 60_000,
    sweepBatch: 10,
  });
  t.teardown(() => on.stop());
  t.ok(['ttl-index', 'sweeper'].includes(on.mode), `mode ${on.mode}`);
  const indexes = await eventModel(conn).collection.indexes();
  if (on.mode === 'ttl-index') {
    t.equal(indexes.find((i) => i.name === TTL_INDEX)?.expireAfterSeconds, 2 * 86_400, 'TTL of 2 days');
  } else {
    t.notOk(
      indexes.some((i) => i.name === TTL_INDEX),
      'no TTL index on a database without TTL support',
    );
  }
  // The sweep is the fallback's work (its first pass starts with the service, and this call joins
  // it); on MongoDB it is a no-op safety net that gives the same result.
  const deleted = await on.sweepOnce();
  t.equal(deleted, 25, 'everything older than 2 days deleted, in rounds of 10');
  t.equal(await eventModel(conn).countDocuments(), 5, 'recent events kept');
  t.equal(await on.sweepOnce(), 0, 'nothing left to sweep');

  await on.stop();
  const offAgain = await startRetention({
    conn,
    logger: testLogger(),
    days: 0,
    sweepIntervalMs: 60_000,
    sweepBatch: 10,
  });
  const after = await eventModel(conn).collection.indexes();
  t.notOk(
    after.some((i) => i.name === TTL_INDEX),
    'turning retention off leaves no TTL index',
  );
  await offAgain.stop();
});

t.test(
  'after its first sweep (in full) the sweeper reads expired events by the hour of their timestamp',
  async (t) => {
    const conn = await testCountedMongo(t, 'audit');
    await prepareStore(conn);
    const days = 2;
    const retention = await startRetention({
      conn,
      logger: testLogger(),
      days,
      sweepIntervalMs: 3_600_000,
      sweepBatch: 10,
    });
    t.teardown(() => retention.stop());
    await retention.sweepOnce(); // the first, in full (it starts with the sweeper)

    // Expired since: in the hour the cutoff is in (the hours before it were read to their end).
    const cutoff = Date.now() - days * DAY;
    const at = new Date(Math.max(cutoff - (cutoff % 3_600_000) + 1, cutoff - 1000));
    const expired = makeEvent('user.login', { at });
    const kept = makeEvent('user.login', { at: new Date(Date.now() - DAY) });
    await eventModel(conn).collection.insertMany([expired, kept].map((e) => toStoredEvent(e)) as never[]);

    const filters: Record<string, unknown>[] = [];
    const onCommand = (e: { commandName: string; command: Record<string, unknown> }) => {
      if (e.commandName === 'find') filters.push(e.command.filter as Record<string, unknown>);
    };
    conn.getClient().on('commandStarted', onCommand);
    t.teardown(() => conn.getClient().off('commandStarted', onCommand));
    t.equal(await retention.sweepOnce(), 1, 'the event that came due is deleted');
    t.ok(filters.length > 0 && filters.every((f) => typeof f.hour === 'string'), 'every read is by hour');
    t.same(
      (await eventModel(conn).find({}, { _id: 1 }).lean()).map((d) => d._id),
      [kept.id],
      'the recent event stays',
    );
  },
);
