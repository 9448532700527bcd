import { jetstream } from '@nats-io/jetstream';
import t from 'tap';
import {
  type DeadLetter,
  decodeJson,
  encodeJson,
  PoisonMessageError,
  runConsumer,
} from '../src/subpaths/messaging.js';
import { eventually, testLogger, testNats } from '../src/testing/index.js';

type Msg = { n: number; failTimes?: number; poison?: boolean };

/** A message without a numeric `n` can never be handled: poison. */
const decodeMsg = (data: Uint8Array): Msg => {
  const m = decodeJson<Msg>(data);
  if (typeof m.n !== 'number') throw new PoisonMessageError('n must be a number');
  return m;
};

t.test(
  'ack after handle, redelivery with backoff, poison and exhausted messages dead-lettered',
  async (t) => {
    const { nc, names } = await testNats(t);
    const js = jetstream(nc);
    const subject = names.eventSubject('request.created');
    const handled: number[] = [];
    const attempts = new Map<number, number>();
    const deadLetters: DeadLetter[] = [];

    const consumer = await runConsumer<Msg>({
      nc,
      logger: testLogger(),
      stream: names.eventsStream,
      durable: 'consumer-test',
      filterSubjects: [names.eventsWildcard],
      decode: decodeMsg,
      handle: async (m, meta) => {
        attempts.set(m.n, meta.deliveryCount);
        if (m.poison) throw new PoisonMessageError('refused');
        if ((m.failTimes ?? 0) >= meta.deliveryCount) throw new Error('transient');
        handled.push(m.n);
      },
      deadLetter: async (record) => {
        deadLetters.push(record);
      },
      maxDeliver: 3,
      backoffMs: [50],
    });
    t.teardown(() => consumer.stop());

    await js.publish(subject, encodeJson({ n: 1 }));
    await js.publish(subject, encodeJson({ n: 2, failTimes: 1 }));
    await js.publish(subject, new TextEncoder().encode('{not json'));
    await js.publish(subject, encodeJson({ n: 'x' }));
    await js.publish(subject, encodeJson({ n: 3, poison: true }));
    await js.publish(subject, encodeJson({ n: 4, failTimes: 99 }));
    await js.publish(subject, encodeJson({ n: 5 }));

    await eventually(() => handled.length === 3 && deadLetters.length === 4, {
      what: 'all messages settled',
    });
    t.same([...handled].sort(), [1, 2, 5], 'good messages handled, including after one redelivery');
    t.equal(attempts.get(2), 2, 'message 2 succeeded on its second delivery');
    t.equal(attempts.get(4), 3, 'message 4 gave up after maxDeliver deliveries');
    const reasons = deadLetters.map((d) => d.reason).sort();
    t.match(reasons.join('|'), /gave up: transient/);
    t.match(reasons.join('|'), /poison: refused/);
    t.equal(
      reasons.filter((r) => r.startsWith('undecodable')).length,
      2,
      'unparseable and invalid both dead-lettered',
    );
    t.ok(deadLetters.every((d) => d.subject === subject && d.streamSequence > 0));
    t.ok(handled.includes(5), 'poison messages did not block later ones');

    // Acked messages are not redelivered to a new runner on the same durable.
    await consumer.stop();
    const again: number[] = [];
    const second = await runConsumer<Msg>({
      nc,
      logger: testLogger(),
      stream: names.eventsStream,
      durable: 'consumer-test',
      filterSubjects: [names.eventsWildcard],
      decode: (data) => decodeJson<Msg>(data),
      handle: async (m) => {
        again.push(m.n);
      },
      deadLetter: async () => undefined,
    });
    t.teardown(() => second.stop());
    await js.publish(subject, encodeJson({ n: 6 }));
    await eventually(() => again.includes(6), { what: 'new message' });
    t.same(again, [6], 'nothing already acked or terminated comes back');
    t.equal(consumer.stats.acked, 3);
    t.equal(consumer.stats.deadLettered, 4);
  },
);

t.test('a failed dead-letter write is retried, never lost', async (t) => {
  const { nc, names } = await testNats(t);
  let failWrites = 2;
  const stored: DeadLetter[] = [];
  const consumer = await runConsumer({
    nc,
    logger: testLogger(),
    stream: names.eventsStream,
    durable: 'dl-retry',
    filterSubjects: [names.eventsWildcard],
    decode: () => {
      throw new PoisonMessageError('always');
    },
    handle: async () => undefined,
    deadLetter: async (record) => {
      if (failWrites-- > 0) throw new Error('store down');
      stored.push(record);
    },
    backoffMs: [50],
  });
  t.teardown(() => consumer.stop());
  await jetstream(nc).publish(names.eventSubject('user.created'), encodeJson({}));
  await eventually(() => stored.length === 1, { what: 'dead letter stored' });
  t.equal(stored[0].deliveryCount, 3, 'stored on the third delivery after two failed writes');
});

t.test('a dead-lettered message is settled for good: not delivered again after the ack wait', async (t) => {
  const { nc, names } = await testNats(t);
  const deadLetters: DeadLetter[] = [];
  const ackWaitMs = 1000;
  const consumer = await runConsumer<Msg>({
    nc,
    logger: testLogger(),
    stream: names.eventsStream,
    durable: 'term-test',
    filterSubjects: [names.eventsWildcard],
    decode: decodeMsg,
    handle: async () => undefined,
    deadLetter: async (record) => {
      deadLetters.push(record);
    },
    ackWaitMs,
  });
  t.teardown(() => consumer.stop());
  await jetstream(nc).publish(names.eventSubject('request.created'), encodeJson({ n: 'x' }));
  await eventually(() => deadLetters.length > 0, { what: 'the poison message dead-lettered' });
  // NATS 2.9 ignores a TERM that carries a reason, and then redelivers once the ack wait is over:
  // three ack waits later the message must still have been dead-lettered exactly once.
  await new Promise((r) => setTimeout(r, 3 * ackWaitMs + 500));
  t.equal(deadLetters.length, 1, 'dead-lettered once');
});
