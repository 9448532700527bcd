import { jetstream } from '@nats-io/jetstream';
import t from 'tap';
import {
  connectNats,
  type DeadLetter,
  decodeJson,
  encodeJson,
  runConsumer,
} from '../src/subpaths/messaging.js';
import { eventually, testEnv, testLogger, testNats } from '../src/testing/index.js';

type Msg = { n: number };

t.test('transient failures are retried past maxDeliver, never dead-lettered', async (t) => {
  const { nc, names } = await testNats(t);
  let outage = true;
  const handled: number[] = [];
  const deadLetters: DeadLetter[] = [];
  let maxSeen = 0;
  class Unavailable extends Error {}
  const consumer = await runConsumer<Msg>({
    nc,
    logger: testLogger(),
    stream: names.eventsStream,
    durable: 'transient',
    filterSubjects: [names.eventsWildcard],
    decode: (data) => decodeJson<Msg>(data),
    handle: async (m, meta) => {
      maxSeen = Math.max(maxSeen, meta.deliveryCount);
      if (outage) throw new Unavailable('store down');
      handled.push(m.n);
    },
    deadLetter: async (r) => {
      deadLetters.push(r);
    },
    isTransient: (err) => err instanceof Unavailable,
    maxDeliver: 2,
    backoffMs: [20],
  });
  t.teardown(() => consumer.stop());
  await jetstream(nc).publish(names.eventSubject('user.login'), encodeJson({ n: 1 }));
  await eventually(() => maxSeen >= 5, { what: 'several deliveries during the outage' });
  outage = false;
  await eventually(() => handled.length === 1, { what: 'handled after the outage' });
  t.same(deadLetters, [], 'nothing dead-lettered although deliveries exceeded maxDeliver');
});

t.test(
  'stop() resolves after the connection closed under an in-flight message; nothing unhandled',
  async (t) => {
    const { names } = await testNats(t);
    const nc = await connectNats({ url: testEnv.natsUrl, name: 'lifecycle' });
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    t.teardown(() => {
      process.off('unhandledRejection', onUnhandled);
    });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = 0;
    const consumer = await runConsumer<Msg>({
      nc,
      logger: testLogger(),
      stream: names.eventsStream,
      durable: 'closing',
      filterSubjects: [names.eventsWildcard],
      decode: (data) => decodeJson<Msg>(data),
      handle: async () => {
        started++;
        await gate; // the side effect finishes only after the connection is gone: ack must not throw
      },
      deadLetter: async () => undefined,
    });
    await jetstream(nc).publish(names.eventSubject('user.login'), encodeJson({ n: 1 }));
    await eventually(() => started === 1, { what: 'message in flight' });
    await nc.close();
    release();
    // Let the handler finish and try to ack before anyone awaits the runner.
    await new Promise((r) => setTimeout(r, 100));
    await consumer.stop();
    t.same(unhandled, [], 'no unhandled rejection from ack on a closed connection');
  },
);

t.test('stop() right after start resolves', async (t) => {
  const { nc, names } = await testNats(t);
  const consumer = await runConsumer<Msg>({
    nc,
    logger: testLogger(),
    stream: names.eventsStream,
    durable: 'quick',
    filterSubjects: [names.eventsWildcard],
    decode: (data) => decodeJson<Msg>(data),
    handle: async () => undefined,
    deadLetter: async () => undefined,
  });
  await consumer.stop();
  t.pass('stopped');
});
