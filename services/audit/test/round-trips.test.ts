// Store and NATS round trips of audit's public operations and background work, counted on the
// real servers (command monitoring on the service's own connection). The README's table is this
// test's expectation: a change that adds a round trip fails here.
import { type DomainEvent, newId } from '@support-desk/contracts';
import { bucketStart, hourKey } from '@support-desk/platform/core';
import { connectMongo } from '@support-desk/platform/service';
import { walkBounds } from '@support-desk/platform/store';
import { connectNats } from '@support-desk/platform/messaging';
import {
  asCaller,
  eventually,
  roundTripCounter,
  testCountedMongo,
  testEnv,
  testLogger,
  testPrincipal,
} from '@support-desk/platform/testing';
import t from 'tap';
import { toStoredEvent } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';
import { EVENTS_SPAN } from '../src/store/event-queries.js';
import { startRetention } from '../src/store/retention.js';
import { actors, makeEvent, prepareStore, publish, composeForTest } from './helpers.js';

interface Trips {
  store: string[];
  nats: number;
}

const DAY = 86_400_000;
/** Events published at once for the ingestion count: exactly one batch. */
const BATCH = 50;

/** A list call: the log's span (one read by `_id`), then one find per hour or day it walks. */
const walked = (steps: number, ...more: string[]) =>
  [...Array.from({ length: steps }, () => 'find events'), 'find listBounds', ...more].sort();

/** `n` counts (`aggregate`): a whole day is counted first, up to 200, to tell a dense one (read by its hours). */
const counted = (n: number) => Array.from({ length: n }, () => 'aggregate events');

const EXPECTED: Record<string, Trips> = {
  // Newest first: today's first hour (the four recent events) in one find; then three days, each
  // counted first (a dense day would be read by its hours): the one holding events is found, the
  // two empty ones are not.
  'GET /v1/events': { store: walked(2, ...counted(3)), nats: 0 },
  // Two types: an equality each (the local store pushes no `$in` down), so the hour is two finds
  // and each of the three days two counts; none of those days holds an event of these types.
  'GET /v1/events?type&resourceType&since': { store: walked(2, ...counted(6)), nats: 0 },
  // From the second event of today's first hour: the rest of it, then the three days as above.
  'GET /v1/events?cursor': { store: walked(2, ...counted(3)), nats: 0 },
  // Oldest first: the first hour three days ago (5 events: a find and a getMore of 4), the rest
  // of that day, two days, today (4 events: a find and a getMore).
  'GET /v1/events/export (9 events, AUDIT_EXPORT_BATCH_SIZE 4)': {
    store: walked(5, 'getMore', 'getMore'),
    nats: 0,
  },
  'GET /v1/events/:id': { store: ['find events'], nats: 0 },
  'GET /v1/requests/:id/events (admin)': { store: ['find events'], nats: 0 },
  'GET /v1/requests/:id/events (agent)': { store: ['find events'], nats: 0 },
  'GET /v1/requests/:id/events (agent, deleted request)': { store: ['find events'], nats: 0 },
  'retention pass (nothing due: the hours since the last pass)': { store: ['find events'], nats: 0 },
};

t.test('round trips of audit operations', async (t) => {
  const conn = await testCountedMongo(t, 'audit');
  await prepareStore(conn);
  const { app, nc, names } = await composeForTest(t, conn, {
    env: {
      AUDIT_BATCH_SIZE: String(BATCH),
      // The batch is written when full: one insert for the BATCH events below, never a partial one.
      AUDIT_BATCH_FLUSH_MS: '1000',
      AUDIT_STATS_LOG_MS: '0',
      AUDIT_EXPORT_BATCH_SIZE: '4',
    },
    start: true,
  });
  const counter = roundTripCounter(conn, nc);
  const measured = new Map<string, Trips>();
  const measure = async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    const { result, trips } = await counter.measure(run);
    measured.set(operation, { store: [...trips.storeCommands].sort(), nats: trips.nats });
    return result;
  };

  const request = newId('request');
  const deleted = newId('request');
  // The recent events in the first hour of today, the old ones at the start of the day three days
  // before: the lists' walks (hours, then days) take the same steps at any time of day.
  const today = bucketStart(Date.now(), DAY);
  const stored: DomainEvent[] = [
    makeEvent('request.created', { resourceId: request, actor: actors.agent, at: new Date(today + 1000) }),
    makeEvent('request.updated', { resourceId: request, actor: actors.agent, at: new Date(today + 2000) }),
    makeEvent('request.created', { resourceId: deleted, actor: actors.agent, at: new Date(today + 2000) }),
    makeEvent('request.deleted', { resourceId: deleted, actor: actors.admin, at: new Date(today + 3000) }),
    ...Array.from({ length: 5 }, (_, i) =>
      makeEvent('user.login', { actor: actors.viewer, at: new Date(today - 3 * DAY + i) }),
    ),
  ];
  // Straight into the store, the lists' span widened as the service's inserts do.
  await walkBounds(conn).stored(
    EVENTS_SPAN,
    stored.map((e) => Date.parse(e.timestamp)),
  );
  await eventModel(conn).collection.insertMany(stored.map((e) => toStoredEvent(e)) as never[]);
  const admin = asCaller(testPrincipal('admin'));
  const agent = asCaller(testPrincipal('agent'));
  const get = async (url: string, headers = admin) => {
    const res = await app.inject({ method: 'GET', url, headers });
    if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`${url}: ${res.body}`);
    return res;
  };

  await measure('GET /v1/events', () => get('/v1/events'));
  await measure('GET /v1/events?type&resourceType&since', () =>
    get(`/v1/events?type=request.created,request.updated&resourceType=request&since=2020-01-01T00:00:00Z`),
  );
  const { nextCursor } = (await get('/v1/events?limit=2')).json().data.pagination;
  await measure('GET /v1/events?cursor', () => get(`/v1/events?limit=2&cursor=${nextCursor}`));
  await measure('GET /v1/events/export (9 events, AUDIT_EXPORT_BATCH_SIZE 4)', () =>
    get('/v1/events/export'),
  );
  await measure('GET /v1/events/:id', () => get(`/v1/events/${stored[0].id}`));
  await measure('GET /v1/requests/:id/events (admin)', () => get(`/v1/requests/${request}/events`));
  await measure('GET /v1/requests/:id/events (agent)', () => get(`/v1/requests/${request}/events`, agent));
  const gone = await measure('GET /v1/requests/:id/events (agent, deleted request)', () =>
    get(`/v1/requests/${deleted}/events`, agent),
  );
  t.equal(gone.statusCode, 404);

  // Ingestion: BATCH events published (from another connection) are stored with one insert.
  const publisher = await connectNats({ url: testEnv.natsUrl, name: 'round-trips-publisher' });
  const observer = await connectMongo({ url: testEnv.mongoUrl, dbName: conn.name });
  t.teardown(async () => {
    await publisher.close();
    await observer.close();
  });
  const ingested = Array.from({ length: BATCH }, () => makeEvent('request.comment_added'));
  const before = stored.length;
  const { trips } = await counter.measure(async () => {
    await publish(publisher, names, ingested);
    await eventually(async () => (await observer.collection('events').countDocuments()) === before + BATCH, {
      what: 'the batch stored',
      timeoutMs: 20_000,
    });
  });
  // The first batch of this process in a new hour widens the lists' span first.
  const widened = hourKey(Date.now()) === hourKey(today) ? [] : ['update listBounds'];
  t.same(trips.storeCommands, [...widened, 'insert events'], `${BATCH} events: one insert`);
  // Each message is acknowledged (one publish each); the consumer's pull requests come on top.
  t.ok(trips.nats >= BATCH, `${trips.nats} NATS messages: ${BATCH} acks and the pulls`);

  // Retention (the FerretDB sweeper; on MongoDB a TTL index does it and this is its safety net).
  const retention = await startRetention({
    conn,
    logger: testLogger(),
    days: 2,
    sweepIntervalMs: 3_600_000,
    sweepBatch: 100,
  });
  t.teardown(() => retention.stop());
  // The first pass starts with it (in full); on MongoDB the TTL index may have been quicker.
  await retention.sweepOnce();
  t.equal(
    await observer.collection('events').countDocuments(),
    before + BATCH - 5,
    'older than 2 days: gone',
  );
  await measure('retention pass (nothing due: the hours since the last pass)', () => retention.sweepOnce());

  if (process.env.PRINT_ROUND_TRIPS) {
    for (const [op, trips] of measured) console.error(JSON.stringify([op, trips]));
  }
  for (const [op, expected] of Object.entries(EXPECTED)) t.same(measured.get(op), expected, op);
});
