// Dead letters through deskctl, on the real stack: an operator lists what audit could not take,
// looks at one, and replays it; a replayed event lands exactly once, and one that still cannot
// be read stays a dead letter.
import { jetstream } from '@nats-io/jetstream';
import { natsNames, newId } from '@support-desk/contracts';
import { connectMongo, connectNats, deadLetterStore, encodeJson } from '@support-desk/platform';
import t from 'tap';
import { cast } from '../src/actors.js';
import { eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin } = await cast(stack);
const conn = await connectMongo({ url: stack.env.MONGO_URL, dbName: `${stack.run}_audit` });
t.teardown(() => conn.close());
const nc = await connectNats({ url: stack.env.NATS_URL, name: `e2e-dead-letters-${stack.run}` });
t.teardown(() => nc.drain());
const names = natsNames(stack.run);
const deadLetters = deadLetterStore(conn).model;

const event = (id = newId('event')) => ({
  v: 1,
  id,
  type: 'user.login',
  resourceType: 'user',
  resourceId: admin.id,
  actor: { id: admin.id, name: 'E2E Admin', email: admin.email, role: 'admin' },
  metadata: { userAgent: null, source: 'oauth', requestId: null },
  timestamp: new Date().toISOString(),
});

t.test('deskctl lists, shows and replays audit dead letters; a replayed event lands once', async (t) => {
  // A message no release can read (dead-lettered by audit itself), and a good event whose dead
  // letter an older audit wrote (as a release that refused an unknown field would have).
  await jetstream(nc).publish(`${stack.run}.events.user.login`, '{"not": "an event"}');
  const good = event();
  await eventually(async () => (await deadLetters.countDocuments()) === 1, {
    what: 'the poison dead-lettered',
  });
  await deadLetters.create({
    stream: names.eventsStream,
    consumer: 'audit',
    subject: `${stack.run}.events.user.login`,
    streamSequence: 0,
    deliveryCount: 1,
    reason: 'not a DomainEvent: /tenantId unknown property (an older release)',
    data: JSON.stringify({ ...good, tenantId: 'ten_1' }),
    failedAt: new Date(),
  });

  const list = await stack.deskctlJson(['dead-letters', 'list', '--service', 'audit']);
  t.equal(list.total, 2, 'both listed');
  const older = list.deadLetters.find((d: { reason: string }) => /older release/.test(d.reason));
  const poison = list.deadLetters.find((d: { reason: string }) => !/older release/.test(d.reason));
  t.match(poison, { subject: `${stack.run}.events.user.login`, reason: /envelope|domain event/ });
  const shown = await stack.deskctlJson(['dead-letters', 'show', older.id, '--service', 'audit']);
  t.match(JSON.parse(shown.data), { id: good.id, tenantId: 'ten_1' }, 'the message as it arrived');

  const replay = await stack.deskctlJson(['dead-letters', 'replay', `${older.id},${poison.id}`]);
  t.same(replay.replayed, [older.id], 'the readable one is replayed');
  t.match(replay.failed, [{ id: poison.id, reason: /replay failed/ }], 'the unreadable one fails again');
  const stored = await admin.api.get(`/v1/events/${good.id}`);
  t.equal(stored.status, 200, 'the replayed event is in the audit log');
  t.equal(stored.json.data.type, 'user.login');

  const again = await stack.deskctlJson(['dead-letters', 'replay', older.id]);
  t.same(again, { replayed: [], failed: [] }, 'a second replay finds nothing to do');
  await jetstream(nc).publish(`${stack.run}.events.user.login`, encodeJson(good), {
    msgID: `dup-${good.id}`,
  });
  await new Promise((r) => setTimeout(r, 500));
  const events = await admin.api.get(`/v1/events?resourceId=${admin.id}&type=user.login&limit=100`);
  t.equal(
    events.json.data.events.filter((e: { id: string }) => e.id === good.id).length,
    1,
    'delivered again as well: still one record',
  );
  t.equal(await deadLetters.countDocuments(), 1, 'the unreadable one stays a dead letter');

  const all = await stack.deskctlJson(['dead-letters', 'replay', '--all', '--service', 'audit']);
  t.same(all.replayed, [], '--all retries what is left');
  t.equal(all.failed.length, 1);
  const usage = await stack.deskctl(['dead-letters', 'replay'], { json: false });
  t.equal(usage.code, 2, 'naming nothing is a usage error');
});
