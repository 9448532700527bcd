// Dead letters through deskctl, on the real stack: an operator lists what audit (or requests' read
// model) could not take, looks at one, and replays it; a replayed event lands exactly once, and
// one that still cannot be read stays a dead letter.
import { natsNames, newId } from '@support-desk/contracts';
import { connectMongo } from '@support-desk/platform/service';
import { connectNats, deadLetterStore, encodeJson } from '@support-desk/platform/messaging';
import { publishSigned } from '@support-desk/platform/testing';
import t from 'tap';
import { cast, createActor } from '../src/actors.js';
import { eventually, startStack } from '../src/stack.js';

const stack = await startStack(t);
const { admin } = await cast(stack);
const conn = await connectMongo({ url: stack.env.MONGO_URL, dbName: `${stack.run}_audit` });
t.teardown(() => conn.close());
const nc = await connectNats({ url: stack.env.NATS_URL, name: `e2e-dead-letters-${stack.run}` });
t.teardown(() => nc.drain());
const names = natsNames(stack.run);
const deadLetters = deadLetterStore(conn).model;
const requestsConn = await connectMongo({ url: stack.env.MONGO_URL, dbName: `${stack.run}_requests` });
t.teardown(() => requestsConn.close());

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

/** The dead letter a consumer of an older release wrote for an event with a field it refused. */
const olderReleaseDeadLetter = (
  model: ReturnType<typeof deadLetterStore>['model'],
  consumer: string,
  message: { type: string; [field: string]: unknown },
) =>
  model.create({
    stream: names.eventsStream,
    consumer,
    subject: `${stack.run}.events.${message.type}`,
    streamSequence: 0,
    deliveryCount: 1,
    reason: 'not a DomainEvent: /tenantId unknown property (an older release)',
    data: JSON.stringify(message),
    failedAt: new Date(),
  });

t.test('deskctl lists, shows and replays audit dead letters; a replayed event lands once', async (t) => {
  // A message no release can read (dead-lettered by audit itself, though identity signed it), and
  // a good event whose dead letter an older audit wrote (as a release that refused an unknown
  // field would have, before messages were signed).
  await publishSigned(nc, `${stack.run}.events.user.login`, '{"not": "an event"}', { as: 'identity' });
  const good = event();
  await eventually(async () => (await deadLetters.countDocuments()) === 1, {
    what: 'the poison dead-lettered',
  });
  await olderReleaseDeadLetter(deadLetters, 'audit', { ...good, tenantId: 'ten_1' });

  const list = await stack.deskctlJson(['dead-letters', 'list', '--service', 'audit']);
  t.equal(list.pagination.total, 2, 'both listed');
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
  await publishSigned(nc, `${stack.run}.events.user.login`, encodeJson(good), {
    as: 'identity',
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

t.test("deskctl lists, shows and replays the requests read model's dead letters; once each", async (t) => {
  // The read model missed a rename: an older requests release dead-lettered the user.updated
  // event, so its entry still has the name from before. (The rename is made for real first, and
  // the entry set back, so that identity holds the new name the replay will fetch.)
  const renamee = await createActor(stack, 'agent', 'renamee');
  t.equal((await admin.api.patch(`/v1/users/${renamee.id}`, { name: 'Renamed Later' })).status, 200);
  const readModel = requestsConn.collection<{ _id: string; name: string }>('users_read_model');
  await eventually(async () => (await readModel.findOne({ _id: renamee.id }))?.name === 'Renamed Later', {
    what: 'the rename in the read model',
  });
  await readModel.updateOne({ _id: renamee.id }, { $set: { name: 'Before Rename' } });
  const updated = {
    ...event(),
    type: 'user.updated',
    resourceId: renamee.id,
    changes: { name: { from: renamee.name, to: 'Renamed Later' } },
    tenantId: 'ten_1',
  };
  const requestsDeadLetters = deadLetterStore(requestsConn).model;
  // The poison published above reached the read model's user-event consumer too: it stays.
  const poisons = (await requestsDeadLetters.find().lean()).map((d) => String(d._id));
  await olderReleaseDeadLetter(requestsDeadLetters, 'requests-read-model-users', updated);

  const list = await stack.deskctlJson(['dead-letters', 'list', '--service', 'requests']);
  t.equal(list.pagination.total, poisons.length + 1, 'listed');
  const letter = list.deadLetters.find((d: { id: string }) => !poisons.includes(d.id));
  t.match(letter, { consumer: 'requests-read-model-users', subject: `${stack.run}.events.user.updated` });
  const shown = await stack.deskctlJson(['dead-letters', 'show', letter.id, '--service', 'requests']);
  t.match(JSON.parse(shown.data), { id: updated.id, resourceId: renamee.id }, 'the message as it arrived');

  const replay = await stack.deskctlJson(['dead-letters', 'replay', letter.id, '--service', 'requests']);
  t.same(replay, { replayed: [letter.id], failed: [] }, 'replayed');
  const entries = async () => readModel.find({ _id: renamee.id }).toArray();
  t.match(await entries(), [{ _id: renamee.id, name: 'Renamed Later' }], 'applied: one entry, the new name');
  const again = await stack.deskctlJson(['dead-letters', 'replay', letter.id, '--service', 'requests']);
  t.same(again, { replayed: [], failed: [] }, 'a second replay finds nothing to do');
  const all = await stack.deskctlJson(['dead-letters', 'replay', '--all', '--service', 'requests']);
  t.same(all.replayed, [], 'nor does --all');
  t.same(
    all.failed.map((f: { id: string }) => f.id),
    poisons,
    'which only retries the poison, in vain',
  );
  t.equal((await entries()).length, 1, 'still exactly one entry');
  const left = await stack.deskctlJson(['dead-letters', 'list', '--service', 'requests']);
  t.same(
    left.deadLetters.map((d: { id: string }) => d.id),
    poisons,
    'the replayed one is gone',
  );
});
