import { Schema } from 'mongoose';
import t from 'tap';
import { connectMongo, isDatabaseUnreachable } from '../src/subpaths/service.js';
import { createHttpApp, ok } from '../src/subpaths/http.js';
import { notFound } from '../src/subpaths/core.js';
import { eventually, startPrivateMongo, testLogger } from '../src/testing/index.js';

t.test('a database outage answers 503 SERVICE_UNAVAILABLE with Retry-After, then recovers', async (t) => {
  const mongo = await startPrivateMongo(t);
  const conn = await connectMongo({ url: mongo.url, dbName: 'outage', serverSelectionTimeoutMS: 1000 });
  t.teardown(() => conn.close());
  const Thing = conn.model('Thing', new Schema({ _id: String, title: String }, { versionKey: false }));
  await Thing.create({ _id: 'thing_1', title: 'kept' });

  const app = createHttpApp({ logger: testLogger() });
  app.get<{ Params: { id: string } }>('/things/:id', async (request) => {
    const thing = await Thing.findById(request.params.id).lean();
    if (!thing) throw notFound('thing');
    return ok(thing);
  });
  t.teardown(() => app.close());
  const get = () => app.inject({ method: 'GET', url: '/things/thing_1' });

  t.equal((await get()).statusCode, 200, 'served while the database is up');
  await mongo.stop();
  const down = await get();
  t.equal(down.statusCode, 503);
  t.equal(down.json().error.code, 'SERVICE_UNAVAILABLE');
  t.match(down.json().error.message, /database is unreachable; retry later \(error id [0-9a-f-]{36}\)/);
  t.notMatch(down.body, /Mongo|ECONNREFUSED|127\.0\.0\.1/, 'no driver internals in the answer');
  t.equal(down.headers['retry-after'], '5');

  await mongo.start();
  const back = await eventually(async () => ((await get()).statusCode === 200 ? true : null), {
    timeoutMs: 30_000,
    intervalMs: 250,
    what: 'the database to be reachable again',
  });
  t.ok(back, 'served again once the database is back, without a restart');
});

t.test('isDatabaseUnreachable tells connection failures from query failures', async (t) => {
  const named = (name: string, message = '') => Object.assign(new Error(message), { name });
  t.ok(isDatabaseUnreachable(named('MongoServerSelectionError')));
  t.ok(isDatabaseUnreachable(named('MongoNetworkError')));
  t.ok(
    isDatabaseUnreachable(
      named('MongooseError', 'Operation `things.findOne()` buffering timed out after 10000ms'),
    ),
  );
  t.notOk(isDatabaseUnreachable(named('MongooseError', 'Cast to ObjectId failed')));
  t.notOk(isDatabaseUnreachable(named('MongoServerError', 'E11000 duplicate key error')));
  const shuttingDown = Object.assign(named('MongoServerError', 'interrupted at shutdown'), { code: 11600 });
  t.ok(isDatabaseUnreachable(shuttingDown), 'a server in the middle of its shutdown');
  const ended = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
  t.ok(isDatabaseUnreachable(ended), 'a socket failure the driver passes through');
  t.notOk(isDatabaseUnreachable(new Error('boom')));
  t.notOk(isDatabaseUnreachable(null));
});
