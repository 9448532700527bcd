import { generateKeyPairSync } from 'node:crypto';
import { EVENT_CATALOGUE, EVENT_TYPES, newId } from '@support-desk/contracts';
import { fixtures } from '@support-desk/contracts/fixtures';
import { jetstream } from '@nats-io/jetstream';
import { deadLetterStore, encodeJson, messageSigner } from '@support-desk/platform/messaging';
import {
  asCaller,
  eventually,
  publishEvent,
  publishSigned,
  testMongo,
  testNats,
  testPrincipal,
} from '@support-desk/platform/testing';
import t from 'tap';
import { eventModel, fromStoredChanges, type StoredEvent } from '../src/store/event-model.js';
import {
  allTypes,
  composeForTest,
  countEvents,
  ingest,
  makeEvent,
  prepareStore,
  publish,
  publishRaw,
} from './helpers.js';

t.test("every event type (the spec's 18, the trash's two) is stored as published", async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  await ingest(t, { nc, conn, names });
  const events = allTypes();
  events[1].changes = { title: { from: 'a', to: 'b' } };
  // As the SLA monitor writes them: field names with dots, which a document store may refuse as keys.
  for (const e of events.filter((x) => x.type.startsWith('system.sla_'))) {
    e.changes = {
      'sla.responseStatus': { from: 'at_risk', to: 'breached' },
      'sla.responseTarget': { from: null, to: e.timestamp },
    };
  }
  await publish(nc, names, events);
  await eventually(async () => (await countEvents(conn)) === EVENT_TYPES.length, { what: 'all stored' });

  const stored = await eventModel(conn).find().lean<StoredEvent[]>();
  t.same(new Set(stored.map((e) => e.type)), new Set(EVENT_TYPES), 'one record per type');
  for (const e of events) {
    const s = stored.find((x) => x._id === e.id)!;
    t.equal(s.resourceType, EVENT_CATALOGUE[e.type]);
    t.equal(s.resourceId, e.resourceId);
    t.same(s.actor, e.actor);
    t.same(s.metadata, e.metadata);
    t.ok(s.timestamp instanceof Date, 'timestamp is a BSON date');
    t.equal(s.timestamp.toISOString(), e.timestamp);
    t.equal(s.ipAddress, e.ipAddress);
    t.ok(s.storedAt instanceof Date);
    if (e.changes) t.same(fromStoredChanges(s.changes), e.changes, `${e.type} changes kept field by field`);
    else t.notOk('changes' in s, 'no changes field when nothing changed');
  }
});

t.test('duplicate publish and redelivery never create a second record', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const ingestion = await ingest(t, { nc, conn, names });
  const event = makeEvent('request.created');
  // Same msgID within the stream's window: JetStream drops it. Different msgID: stored twice in the
  // stream, so the audit store's key is what keeps it single.
  await publish(nc, names, [event, event]);
  const subject = names.eventSubject(event.type);
  await publishSigned(nc, subject, encodeJson(event), { as: 'requests', msgID: `${event.id}-again` });
  await publishSigned(nc, subject, encodeJson(event), { as: 'requests' });
  await eventually(() => ingestion.stats().acked >= 3, { what: 'three deliveries acked' });
  t.equal(await countEvents(conn), 1, 'one record');
  t.ok(ingestion.stats().duplicates >= 2, 'duplicates counted as success');
});

t.test('poison messages go to dead letters without blocking later events', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const ingestion = await ingest(t, { nc, conn, names });
  await publishRaw(nc, names, '{not json');
  await publishRaw(nc, names, new Uint8Array([0xff, 0xfe, 0x00]));
  const invalid = { ...makeEvent('request.created'), type: 'Request Exploded!' };
  await publishRaw(nc, names, JSON.stringify(invalid));
  const mismatched = { ...makeEvent('user.created'), resourceType: 'request' };
  await publishRaw(nc, names, JSON.stringify(mismatched));
  const missing = makeEvent('user.login') as Partial<ReturnType<typeof makeEvent>>;
  delete missing.actor;
  await publishRaw(nc, names, JSON.stringify(missing));
  const good = makeEvent('request.updated');
  await publish(nc, names, [good]);

  const dead = deadLetterStore(conn).model;
  await eventually(async () => (await dead.countDocuments()) === 5 && (await countEvents(conn)) === 1, {
    what: 'five dead letters and the good event',
  });
  const reasons = (await dead.find().lean()).map((d) => String(d.reason));
  t.equal(reasons.filter((r) => /not JSON/.test(r)).length, 2, 'invalid JSON and invalid UTF-8');
  t.ok(
    reasons.some((r) => /\/type/.test(r)),
    'a type that cannot be one names the field',
  );
  t.ok(
    reasons.some((r) => /resourceType/.test(r)),
    'resourceType contradicting the type',
  );
  t.ok(
    reasons.some((r) => /actor/.test(r)),
    'missing actor',
  );
  t.equal(ingestion.stats().deadLettered, 5, 'counted');
  t.equal(await countEvents(conn, { _id: good.id }), 1, 'the later good event is stored');
});

t.test('an event is stored only from a service that may publish it, on its own subject', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const ingestion = await ingest(t, { nc, conn, names });
  const promotion = makeEvent('user.role_changed', { changes: { role: { from: 'viewer', to: 'admin' } } });
  const data = encodeJson(promotion);
  const refused: string[] = [];
  // Unsigned, as any NATS user could publish it.
  await jetstream(nc).publish(names.eventSubject('user.role_changed'), data);
  refused.push('unsigned');
  // Signed by a key that is not identity's, claiming to be identity.
  const forger = messageSigner('identity', generateKeyPairSync('ed25519').privateKey);
  await jetstream(nc).publish(names.eventSubject('user.role_changed'), data, {
    headers: forger.sign(names.eventSubject('user.role_changed'), data),
  });
  refused.push("not signed by identity's key");
  // A user event signed by requests, which publishes no user events.
  await publishEvent(nc, names, { ...promotion, id: newId('event') }, 'requests');
  refused.push('requests may not publish user.role_changed');
  // On a subject webhooks may publish (its configuration changes), a type that does not belong there.
  const onConfig = encodeJson({ ...promotion, id: newId('event') });
  await publishSigned(nc, names.eventSubject('system.config_changed'), onConfig, { as: 'webhooks' });
  refused.push('does not belong on');
  // Webhooks announces its subscriptions' changes, never a group's.
  const group = makeEvent('system.config_changed', { resourceId: newId('group') });
  await publishEvent(nc, names, group, 'webhooks');
  refused.push('webhooks may not publish system.config_changed');
  // Identity's own, and webhooks' about a subscription, are events.
  const fromIdentity = { ...promotion, id: newId('event') };
  await publishEvent(nc, names, fromIdentity);
  const subscription = makeEvent('system.config_changed', { resourceId: newId('webhook') });
  await publishEvent(nc, names, subscription, 'webhooks');

  const dead = deadLetterStore(conn).model;
  await eventually(
    async () => (await dead.countDocuments()) === refused.length && (await countEvents(conn)) === 2,
    {
      what: `${refused.length} dead letters and the two genuine events`,
    },
  );
  const reasons = (await dead.find().sort({ streamSequence: 1 }).lean()).map((d) => String(d.reason));
  refused.forEach((why, n) => t.match(reasons[n], why, `refused: ${why}`));
  t.equal(await countEvents(conn, { _id: promotion.id }), 0, 'no forged promotion in the audit log');
  t.equal(await countEvents(conn, { _id: fromIdentity.id }), 1, "identity's event is stored");
  t.equal(await countEvents(conn, { _id: subscription.id }), 1, "webhooks' subscription change is stored");
  t.equal(ingestion.stats().deadLettered, refused.length);
});

t.test('mixed versions: every event of every frozen fixture is stored, none dead-lettered', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  const ingestion = await ingest(t, { nc, conn, names });
  const { v1, unversioned, future, snapshots } = fixtures.events();
  const all = [...v1, ...unversioned, ...future, ...snapshots];
  for (const e of all) await publishEvent(nc, names, e);
  await eventually(async () => (await countEvents(conn)) === all.length, { what: 'every event stored' });
  t.equal(await deadLetterStore(conn).model.countDocuments(), 0, 'nothing dead-lettered');
  t.equal(ingestion.stats().deadLettered, 0);
  const merged = future.find((e) => e.type === 'request.merged')!;
  const stored = await eventModel(conn).findById(merged.id).lean<Record<string, unknown>>();
  t.equal(stored?.type, 'request.merged', 'an event type this release does not know is still an event');
  t.notOk('links' in (stored ?? {}), 'fields this release does not know are not kept');
  const extended = await eventModel(conn).findById(future[0].id).lean<Record<string, unknown>>();
  t.match(extended, { type: future[0].type, actor: { id: (future[0].actor as { id: string }).id } });
  t.notOk('tenantId' in (extended ?? {}));
});

t.test('snapshots: stored as published, shown as this release knows them, read tolerantly', async (t) => {
  const conn = await testMongo(t, 'audit');
  const { nc, names } = await testNats(t);
  await prepareStore(conn);
  await ingest(t, { nc, conn, names });
  const { app } = await composeForTest(t, conn);
  const [requestCreated, userCreated] = fixtures.events().snapshots as Record<string, any>[];
  const request = requestCreated!.snapshot as Record<string, unknown>;
  const variant = (
    type: 'request.updated' | 'request.assigned' | 'request.status_changed',
    snapshot: unknown,
  ) => ({
    ...makeEvent(type, { resourceId: request.id as string }),
    snapshot,
  });
  // A newer producer's fields, and what a faulty one must never get shown: comment bodies.
  const newer = variant('request.updated', {
    ...request,
    mergedInto: null,
    comments: [{ content: 'Secret note', isInternal: true }],
  });
  const notAnObject = variant('request.assigned', 'req_x');
  const incomplete = variant('request.status_changed', { id: request.id, title: 'no other field' });
  const without = makeEvent('request.created');
  const published = [requestCreated, userCreated, newer, notAnObject, incomplete, without];
  for (const e of published) await publishEvent(nc, names, e!);
  await eventually(async () => (await countEvents(conn)) === published.length, { what: 'all stored' });
  t.equal(await deadLetterStore(conn).model.countDocuments(), 0, 'a bad snapshot is no poison');

  const admin = asCaller(testPrincipal('admin'));
  const detail = async (id: unknown) =>
    (await app.inject({ method: 'GET', url: `/v1/events/${String(id)}`, headers: admin })).json().data;
  t.same((await detail(requestCreated!.id)).snapshot, request, 'a request snapshot, as published');
  t.same((await detail(userCreated!.id)).snapshot, userCreated!.snapshot, 'a user snapshot');
  t.same((await detail(newer.id)).snapshot, request, 'without the fields this release does not know');
  t.notMatch(JSON.stringify(await detail(newer.id)), /Secret note/, 'never comment bodies');
  t.notOk('snapshot' in (await detail(notAnObject.id)), 'not an object: left out');
  t.notOk('snapshot' in (await detail(incomplete.id)), 'not a snapshot of this release: left out');
  t.notOk('snapshot' in (await detail(without.id)), 'events without one have none');
  const list = await app.inject({ method: 'GET', url: '/v1/events?type=request.created', headers: admin });
  const listed = list.json().data.events.find((e: { id: string }) => e.id === requestCreated!.id);
  t.same(listed.snapshot, request, 'the list shows it too');
});
